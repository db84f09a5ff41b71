import type { FilterDetail } from "../framework/plugin.js";
import type { ReasonCode } from "../framework/reasons.js";
import type { ReasonSlotInfo } from "./recorded-diagnosis.js";

/**
 * At most this many nodes are recorded per diagnosis (`PlacementDiagnosis.nodes`): the scored
 * feasible nodes first (the candidates, best first, then the rest of the sampled window), then
 * refused nodes in slot order; a placement records fewer ({@link MAX_PLACED_VERDICTS}). Counts always
 * cover every node; this keeps a stored diagnosis small.
 */
export const MAX_NODE_VERDICTS = 64;

/**
 * A placement records fewer: at most {@link MAX_PLACED_VERDICTS} nodes, of them at most
 * {@link MAX_FEASIBLE_VERDICTS} feasible (the candidates first, the winner leading), then refused
 * ones. A feasible node's verdict says only "passed every filter", which `feasibleNodes` counts and
 * `candidates` scores; every placement is stored with its diagnosis, and 64 such verdicts were most
 * of what a placement wrote. A refusal keeps the full {@link MAX_NODE_VERDICTS}: there the refused
 * nodes are the whole answer.
 */
export const MAX_PLACED_VERDICTS = 16;
export const MAX_FEASIBLE_VERDICTS = 8;

/**
 * At most this many filter failures are recorded per diagnosis, over all its refused nodes; a
 * refused node is recorded with all its failures or not at all. With {@link MAX_NODE_VERDICTS},
 * this bounds a stored diagnosis to about 10 KiB of protobuf whatever the cluster size.
 */
export const MAX_RECORDED_FAILURES = 128;

/** One filter that refused one node, with the numbers it computed. */
export interface FilterFailure {
  readonly plugin: string;
  readonly reason: ReasonCode;
  readonly detail: FilterDetail;
}

/** What the scheduler saw on one node in one decision. */
export interface NodeVerdict {
  readonly nodeId: string;
  readonly feasible: boolean;
  /** Every filter the node failed, in pipeline order; empty when feasible. */
  readonly failures: readonly FilterFailure[];
}

const noData = new Int32Array(0);
/** Absent number in the packed form. */
const NONE = -2147483648;
const numberFields = ["requested", "free", "allocatable", "capacity"] as const;
/** Per failure: reason slot, the four numbers, unit index, subject index. */
const WIDTH = 7;

/**
 * The recorded nodes of one diagnosis, packed: node ids (shared with the snapshot), one Int32Array
 * (per node its failure count, then {@link WIDTH} integers per failure) and the few strings
 * (units, subjects) the failures refer to.
 */
export class PackedVerdicts {
  static readonly empty = new PackedVerdicts([], new Int32Array(0), []);

  constructor(
    readonly nodeIds: readonly string[],
    private readonly data: Int32Array,
    private readonly strings: readonly string[],
  ) {}

  /**
   * Packs verdicts; `slotOf` gives the pipeline's reason slot of a (plugin, reason). Numbers are
   * integers (cpu in millicores, memory in MiB, disk in GiB).
   */
  static pack(
    verdicts: readonly { nodeId: string; failures: readonly FilterFailure[] }[],
    slotOf: (plugin: string, reason: ReasonCode) => number,
  ): PackedVerdicts {
    if (verdicts.length === 0) return PackedVerdicts.empty;
    let size = 0;
    for (const v of verdicts) size += 1 + WIDTH * v.failures.length;
    // Only feasible nodes (a placement on a large cluster): no numbers to keep, only the ids.
    if (size === verdicts.length)
      return new PackedVerdicts(
        verdicts.map((v) => v.nodeId),
        noData,
        [],
      );
    const data = new Int32Array(size);
    const strings: string[] = [];
    const index = (s: string | undefined) => {
      if (s === undefined || s === "") return -1;
      const at = strings.indexOf(s);
      return at >= 0 ? at : strings.push(s) - 1;
    };
    let i = 0;
    for (const v of verdicts) {
      data[i++] = v.failures.length;
      for (const f of v.failures) {
        data[i++] = slotOf(f.plugin, f.reason);
        for (const field of numberFields) data[i++] = f.detail[field] ?? NONE;
        data[i++] = index(f.detail.unit);
        data[i++] = index(f.detail.subject);
      }
    }
    return new PackedVerdicts(
      verdicts.map((v) => v.nodeId),
      data,
      strings,
    );
  }

  /** The verdicts, built from the packed form. */
  unpack(slots: readonly ReasonSlotInfo[]): NodeVerdict[] {
    const d = this.data;
    let i = 0;
    return this.nodeIds.map((nodeId) => {
      const n = d[i++] ?? 0;
      const failures: FilterFailure[] = [];
      for (let k = 0; k < n; k++, i += WIDTH) {
        const { plugin, reason } = slots[d[i]!]!;
        const detail: { -readonly [K in keyof FilterDetail]: FilterDetail[K] } = {};
        numberFields.forEach((field, j) => {
          const x = d[i + 1 + j]!;
          if (x !== NONE) detail[field] = x;
        });
        if (d[i + 5]! >= 0) detail.unit = this.strings[d[i + 5]!]!;
        if (d[i + 6]! >= 0) detail.subject = this.strings[d[i + 6]!]!;
        failures.push({ plugin, reason, detail });
      }
      return { nodeId, feasible: n === 0, failures };
    });
  }
}

/**
 * The numbers behind a failure for people: `need 512 MiB, free 256 MiB of 8192 MiB` for resources,
 * the subject (`kvm`, `tcp/8080`) otherwise, empty when there is nothing to add to the reason.
 */
export function renderFilterDetail(detail: FilterDetail): string {
  if (detail.requested !== undefined && detail.free !== undefined) {
    const unit = detail.unit === "millicores" ? "m" : ` ${detail.unit ?? ""}`.trimEnd();
    const of = detail.allocatable !== undefined ? ` of ${detail.allocatable}${unit}` : "";
    return `need ${detail.requested}${unit}, free ${detail.free}${unit}${of}`;
  }
  return detail.subject ?? "";
}
