import { PersysError } from "@persys/schema";
import type { LeaseId, Revision } from "./state-store.js";

/** Typed errors both state stores raise the same way. */

/** NOT_FOUND for a lease that does not exist (never granted, expired or revoked), naming the field. */
export function leaseNotFound(lease: LeaseId, path = "lease"): PersysError {
  return new PersysError("NOT_FOUND", `lease ${lease} not found: it expired or was revoked`, {
    details: [{ path, reason: `lease ${lease} not found (expired or revoked)` }],
  });
}

/** COMPACTED for a watch after `afterRevision` when history before `compactRevision` is gone. */
export function compactedError(afterRevision: Revision, compactRevision: Revision | undefined): PersysError {
  const oldest = compactRevision === undefined ? "" : ` (history before revision ${compactRevision} is gone)`;
  return new PersysError(
    "COMPACTED",
    `cannot watch after revision ${afterRevision}: it was compacted${oldest}; ` +
      "read the current state and watch from its revision",
    {
      details: [
        {
          path: "afterRevision",
          reason:
            compactRevision === undefined
              ? "is older than the kept history"
              : `must be >= ${compactRevision - 1} (oldest kept history)`,
        },
      ],
    },
  );
}

/** The error every method of a closed store raises. */
export function storeClosed(): PersysError {
  return new PersysError("UNAVAILABLE", "the state store is closed", { retryable: false });
}
