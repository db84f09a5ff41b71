/**
 * The one conformance suite every `StateStore` implementation must pass (etcd and embedded), so that the
 * control plane can rely on etcd's semantics whichever store it runs on.
 *
 * ```ts
 * describeStateStore("embedded", { open: ..., openExclusive: ... });
 * ```
 */
import { describe } from "vitest";
import { describeArgumentErrors } from "./state-store-errors.conformance.js";
import type { StateStoreHarness } from "./state-store-helpers.js";
import { describeKeyValues } from "./state-store-kv.conformance.js";
import { describeLeases } from "./state-store-lease.conformance.js";
import { describeTransactions } from "./state-store-txn.conformance.js";
import { describeWatches } from "./state-store-watch.conformance.js";

export type { StateStoreHarness } from "./state-store-helpers.js";

export function describeStateStore(name: string, harness: StateStoreHarness): void {
  describe(`StateStore conformance: ${name}`, () => {
    describeKeyValues(harness);
    describeTransactions(harness);
    describeWatches(harness);
    describeLeases(harness);
    describeArgumentErrors(harness);
  });
}
