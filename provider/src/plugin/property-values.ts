/**
 * Pulumi's property-value encoding in `google.protobuf.Struct`: secrets are objects tagged with a
 * signature key, values not known during a preview are a sentinel string. The provider works on
 * plain JSON, so requests are unwrapped here (remembering which top-level properties were secret)
 * and responses wrapped again.
 */

/** The signature key of special values and the signature of a secret. */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
/** The value the engine sends for an input whose value is not known yet (preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export type Props = Record<string, unknown>;

/** Plain properties plus what was special about them. */
export interface Unwrapped {
  readonly props: Props;
  /** Top-level keys whose value was (or contained) a secret. */
  readonly secretKeys: ReadonlySet<string>;
  /** True when some value, at any depth, is unknown. */
  readonly hasUnknowns: boolean;
}

function isSecret(value: unknown): value is { value: unknown } {
  return typeof value === "object" && value !== null && (value as Props)[SIG_KEY] === SECRET_SIG;
}

function strip(value: unknown, found: { secret: boolean; unknown: boolean }): unknown {
  if (value === UNKNOWN) {
    found.unknown = true;
    return value;
  }
  if (isSecret(value)) {
    found.secret = true;
    return strip(value.value, found);
  }
  if (Array.isArray(value)) return value.map((v) => strip(v, found));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strip(v, found)]));
  }
  return value;
}

/** Unwraps secrets (keeping the sentinel of unknowns), recording secret top-level keys. */
export function unwrapProps(props: Props | undefined): Unwrapped {
  const secretKeys = new Set<string>();
  let hasUnknowns = false;
  const out: Props = {};
  for (const [key, value] of Object.entries(props ?? {})) {
    const found = { secret: false, unknown: false };
    out[key] = strip(value, found);
    if (found.secret) secretKeys.add(key);
    if (found.unknown) hasUnknowns = true;
  }
  return { props: out, secretKeys, hasUnknowns };
}

/** Marks `keys` of `props` secret; undefined values are dropped (a Struct has no undefined). */
export function wrapProps(props: Props, secretKeys: Iterable<string> = []): Props {
  const secret = new Set(secretKeys);
  const out: Props = {};
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined) continue;
    out[key] = secret.has(key) ? { [SIG_KEY]: SECRET_SIG, value } : value;
  }
  return out;
}

/** Whether a plain value is, or contains, the unknown sentinel. */
export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (typeof value === "object" && value !== null) return Object.values(value).some(containsUnknown);
  return false;
}
