// Prints "N passed, N failed" from vitest's JSON report; fails when no test ran. A test file that
// failed before any of its tests ran (an import error, a missing service) counts as one failure.
import { readFileSync } from "node:fs";

const path = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(path, "utf8"));
} catch (error) {
  console.log("0 passed, 1 failed");
  console.error(`[test] FAIL: no vitest report at ${path}: ${error.message}`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const brokenFiles = (report.testResults ?? []).filter(
  (file) => file.status === "failed" && !(file.assertionResults ?? []).some((t) => t.status === "failed"),
).length;
const failed = (report.numFailedTests ?? 0) + brokenFiles;
console.log(`${passed} passed, ${failed} failed`);
if (passed === 0) console.error("[test] FAIL: no test passed");
process.exit(failed > 0 || passed === 0 ? 1 : 0);
