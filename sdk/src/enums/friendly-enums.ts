/**
 * Friendly spellings of the API's enums: `WORKLOAD_KIND_CONTAINER` is `container`,
 * `RESTART_POLICY_MODE_ON_FAILURE` is `on-failure`, `LABEL_OPERATOR_NOT_IN` is `not-in` (and reads
 * `NotIn`, `not_in`, `NOT_IN` too). Used by the builders, the spec-file parser and `persysctl`.
 */

/** A generated numeric TypeScript enum (`api.WorkloadState`, `api.Protocol`, ...). */
export type NumericEnum = Readonly<Record<string, string | number>>;

/** The member names of an enum, in declaration order (`UNSPECIFIED` first). */
export function enumMemberNames(values: NumericEnum): string[] {
  return Object.keys(values).filter((key) => typeof values[key] === "number");
}

/**
 * The prefix shared by an enum's value names: what precedes `UNSPECIFIED` in its zero value
 * (`WORKLOAD_KIND_`), else the longest common `_`-separated prefix, else `""`.
 */
export function enumPrefix(names: readonly string[]): string {
  const zero = names.find((name) => name.endsWith("_UNSPECIFIED"));
  if (zero) return zero.slice(0, -"UNSPECIFIED".length);
  const parts = names.map((name) => name.split("_"));
  const first = parts[0] ?? [];
  let shared = 0;
  while (shared < first.length - 1 && parts.every((p) => p.length > shared + 1 && p[shared] === first[shared]))
    shared++;
  return shared === 0 ? "" : `${first.slice(0, shared).join("_")}_`;
}

/** `RESTART_POLICY_MODE_ON_FAILURE` → `on-failure`, given the enum's names. An unprefixed name is lowercased. */
export function friendlyEnumName(names: readonly string[], fullName: string): string {
  const prefix = enumPrefix(names);
  const bare = prefix && fullName.startsWith(prefix) ? fullName.slice(prefix.length) : fullName;
  return bare.toLowerCase().replaceAll("_", "-");
}

const squash = (text: string) => text.toLowerCase().replace(/[-_\s]/g, "");

/**
 * The full value name a spelling stands for, or `undefined`. Accepted: the full name
 * (`PROTOCOL_UDP`), the name without the prefix in any case with `-`, `_` or CamelCase
 * (`udp`, `on-failure`, `OnFailure`, `NotIn`). The `UNSPECIFIED` value is only accepted by its full name.
 */
export function resolveEnumName(names: readonly string[], spelling: string): string | undefined {
  if (names.includes(spelling)) return spelling;
  const prefix = enumPrefix(names);
  const wanted = squash(spelling);
  return names.find((name) => {
    if (name.endsWith("_UNSPECIFIED")) return false;
    const bare = prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
    return squash(bare) === wanted || squash(name) === wanted;
  });
}

/** The friendly spellings of an enum's values, `UNSPECIFIED` left out (for help texts and errors). */
export function friendlyEnumNames(names: readonly string[]): string[] {
  return names.filter((name) => !name.endsWith("_UNSPECIFIED")).map((name) => friendlyEnumName(names, name));
}

/**
 * The friendly label of an enum value, e.g. `enumLabel(api.WorkloadState, 3)` → `running`.
 * An unknown number (from a newer server) is shown as the number.
 */
export function enumLabel(values: NumericEnum, value: number): string {
  const name = values[value];
  return typeof name === "string" ? friendlyEnumName(enumMemberNames(values), name) : String(value);
}

/**
 * The enum value a spelling stands for (see {@link resolveEnumName}), e.g.
 * `parseEnum(api.Protocol, "udp")` → `api.Protocol.PROTOCOL_UDP`; `undefined` when it names none.
 */
export function parseEnum<E extends NumericEnum>(values: E, spelling: string): E[keyof E] | undefined {
  const name = resolveEnumName(enumMemberNames(values), spelling);
  return name === undefined ? undefined : (values[name] as E[keyof E]);
}
