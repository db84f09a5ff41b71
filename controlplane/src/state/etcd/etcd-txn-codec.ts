import type { ICompare, IRequestOp, IResponseOp } from "etcd3";
import { prefixEnd } from "../key-range.js";
import type { Compare, TxnOp, TxnOpResult } from "../state-store.js";
import { asBuffer } from "../value-codec.js";
import { type EtcdCodec, revision } from "./etcd-codec.js";

/** Transactions on etcd's wire: our compares and ops to etcd's, and etcd's responses back. */

const NO_END = Buffer.of(0);
const COMPARE_TARGET = { version: "Version", createRevision: "Create", modRevision: "Mod", value: "Value" } as const;
const COMPARE_RESULT = { "=": "Equal", "!=": "NotEqual", "<": "Less", ">": "Greater" } as const;

export function etcdCompare(codec: EtcdCodec, c: Compare): ICompare {
  const base = { key: codec.key(c.key), target: COMPARE_TARGET[c.target], result: COMPARE_RESULT[c.op] };
  switch (c.target) {
    case "value":
      return { ...base, value: asBuffer(c.value) };
    case "version":
      return { ...base, version: c.value };
    case "createRevision":
      return { ...base, create_revision: c.value };
    case "modRevision":
      return { ...base, mod_revision: c.value };
  }
}

export function etcdRequestOp(codec: EtcdCodec, op: TxnOp): IRequestOp {
  const key = codec.key(op.key);
  switch (op.type) {
    case "put":
      return {
        request_put: {
          key,
          value: asBuffer(op.value),
          ...(op.lease ? { lease: op.lease } : {}),
          ...(op.prevKv ? { prev_kv: true } : {}),
        },
      };
    case "delete":
      return {
        request_delete_range: {
          key,
          ...(op.prefix ? { range_end: prefixEnd(key) ?? NO_END } : {}),
          ...(op.prevKv ? { prev_kv: true } : {}),
        },
      };
    case "get":
      return { request_range: { key } };
  }
}

/** The result of `op` from etcd's response to it; puts carry the transaction's revision. */
export function txnOpResult(
  codec: EtcdCodec,
  op: TxnOp,
  response: IResponseOp | undefined,
  txnRevision: string,
): TxnOpResult {
  switch (op.type) {
    case "put": {
      const prev = response?.response_put?.prev_kv;
      return {
        type: "put",
        revision: revision(txnRevision),
        ...(op.prevKv && prev ? { prevKv: codec.keyValue(prev) } : {}),
      };
    }
    case "delete": {
      const res = response?.response_delete_range;
      return {
        type: "delete",
        deleted: revision(res?.deleted),
        ...(op.prevKv ? { prevKvs: (res?.prev_kvs ?? []).map((kv) => codec.keyValue(kv)) } : {}),
      };
    }
    case "get": {
      const kv = response?.response_range?.kvs[0];
      return { type: "get", kv: kv && codec.keyValue(kv) };
    }
  }
}
