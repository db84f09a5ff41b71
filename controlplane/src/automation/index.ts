/**
 * Automation: operator policies (when → then, cooldown, dry run, approval) evaluated by the leader
 * and acted out through the public API, with an audit trail. See docs/automation.md.
 */
export { AUDIT_STREAM, AuditTrail, auditRecordOf } from "./audit-trail.js";
export { AutomationEngine, type AutomationEngineOptions } from "./automation-engine.js";
export { AutomationService } from "./automation-service.js";
export { cronMatches, parseCron } from "./cron-schedule.js";
export { PolicyStore } from "./policy-store.js";
export { validatePolicy } from "./policy-validation.js";
