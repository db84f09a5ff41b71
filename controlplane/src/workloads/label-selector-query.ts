import { invalid } from "@persys/schema";

type Requirement =
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "in" | "notin"; values: Set<string> }
  | { key: string; op: "exists" | "!exists" };

/**
 * Parses a Kubernetes-style label selector (`app=web,tier!=db,zone in (a,b),gpu,!spot`) into a
 * predicate on label maps. An empty selector matches everything. Bad syntax is INVALID_ARGUMENT
 * naming `field`.
 */
export function parseLabelSelector(text: string, field = "labelSelector"): (labels: Record<string, string>) => boolean {
  const requirements: Requirement[] = [];
  const parts = text.match(/(?:[^,(]|\([^)]*\))+/g) ?? [];
  for (const raw of parts) {
    const part = raw.trim();
    if (!part) continue;
    const setBased = part.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/);
    const equality = part.match(/^([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)$/);
    const absent = part.match(/^!\s*([\w./-]+)$/);
    const present = part.match(/^([\w./-]+)$/);
    if (setBased) {
      const values = new Set(
        setBased[3]!
          .split(",")
          .map((v) => v.trim())
          .filter(Boolean),
      );
      requirements.push({ key: setBased[1]!, op: setBased[2] as "in" | "notin", values });
    } else if (equality) {
      requirements.push({ key: equality[1]!, op: equality[2] === "!=" ? "!=" : "=", value: equality[3]! });
    } else if (absent) {
      requirements.push({ key: absent[1]!, op: "!exists" });
    } else if (present) {
      requirements.push({ key: present[1]!, op: "exists" });
    } else {
      throw invalid("INVALID_ARGUMENT", [
        { path: field, reason: `cannot parse "${part}" (e.g. app=web,tier!=db,zone in (a,b))` },
      ]);
    }
  }
  const holds = (r: Requirement, labels: Record<string, string>): boolean => {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.op) {
      case "=":
        return value === r.value;
      case "!=":
        return value !== r.value;
      case "in":
        return has && r.values.has(value!);
      case "notin":
        return !has || !r.values.has(value!);
      case "exists":
        return has;
      case "!exists":
        return !has;
    }
  };
  return (labels) => requirements.every((r) => holds(r, labels));
}

/** Opaque page tokens: the last key of the previous page. */
export const pageToken = {
  encode: (lastKey: string) => Buffer.from(lastKey, "utf8").toString("base64url"),
  decode: (token: string): string => {
    if (!token) return "";
    const key = Buffer.from(token, "base64url").toString("utf8");
    if (!key || pageToken.encode(key) !== token) {
      throw invalid("INVALID_ARGUMENT", [{ path: "pageToken", reason: "is not a token from a previous page" }]);
    }
    return key;
  },
};

/** Page size from a request: 0 means the default; more than the maximum is INVALID_ARGUMENT. */
export function pageSize(requested: number, defaults = { default: 100, max: 1000 }): number {
  if (!Number.isInteger(requested) || requested < 0 || requested > defaults.max) {
    throw invalid("INVALID_ARGUMENT", [{ path: "pageSize", reason: `must be 0..${defaults.max}` }]);
  }
  return requested === 0 ? defaults.default : requested;
}
