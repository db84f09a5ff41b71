/**
 * Readers for Compose value syntaxes (durations, byte sizes, CPUs, ports, volume strings). Each
 * returns the value or a string saying why it is refused; none throws.
 */
import type { ComposeMount, ComposePort } from "./compose-model.js";

export type Parsed<T> = { ok: T } | { error: string };

const durationUnits: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`1m30s`, `500ms`, `10s`) or a number of seconds, in milliseconds. */
export function parseDuration(value: unknown): Parsed<number> {
  if (typeof value === "number" && value >= 0) return { ok: value * 1000 };
  if (typeof value !== "string" || !value.trim())
    return { error: `must be a duration such as "10s", got ${show(value)}` };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let at = 0;
  const s = value.trim();
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * durationUnits[m[2]!]!;
    at = re.lastIndex;
  }
  if (at !== s.length) return { error: `must be a duration such as "10s" or "1m30s", got ${show(value)}` };
  return { ok: Math.round(total) };
}

const byteUnits: Record<string, number> = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** A byte size (`512m`, `1g`, `1.5gb`, `1024`), in bytes. */
export function parseBytes(value: unknown): Parsed<number> {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return { ok: Math.round(value) };
  const m = typeof value === "string" ? /^\s*(\d+(?:\.\d+)?)\s*([bkmgt])?b?\s*$/i.exec(value) : null;
  if (!m) return { error: `must be a size such as "512m" or "1g", got ${show(value)}` };
  return { ok: Math.round(Number(m[1]) * byteUnits[(m[2] ?? "b").toLowerCase()]!) };
}

/** A CPU count (`0.5`, `"2"`). */
export function parseCpus(value: unknown): Parsed<number> {
  const n = typeof value === "string" && value.trim() ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0)
    return { error: `must be a number of CPUs, got ${show(value)}` };
  return { ok: n };
}

function portNumber(text: string, allowZero: boolean): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 65_535 && (allowZero || n >= 1) ? n : undefined;
}

function portRange(text: string, allowZero: boolean): number[] | undefined {
  const [from, to, extra] = text.split("-");
  if (extra !== undefined || from === undefined) return undefined;
  const a = portNumber(from, allowZero);
  const b = to === undefined ? a : portNumber(to, allowZero);
  if (a === undefined || b === undefined || b < a) return undefined;
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

/**
 * One `ports:` entry: short syntax `[[HOST_IP:]HOST[-RANGE]:]CONTAINER[-RANGE][/PROTOCOL]` or the
 * long form `{target, published, host_ip, protocol}`. Ranges expand to one port each.
 */
export function parsePorts(value: unknown): Parsed<ComposePort[]> {
  if (typeof value === "number") value = String(value);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    const target = portNumber(String(v.target ?? ""), false);
    if (target === undefined) return { error: `target must be a port 1..65535, got ${show(v.target)}` };
    const publishedText = v.published === undefined ? "0" : String(v.published);
    const published = portRange(publishedText, true);
    if (published?.length !== 1) return { error: `published must be a port 0..65535, got ${show(v.published)}` };
    const protocol = String(v.protocol ?? "tcp").toLowerCase();
    if (protocol !== "tcp" && protocol !== "udp")
      return { error: `protocol must be tcp or udp, got ${show(v.protocol)}` };
    for (const key of Object.keys(v)) {
      if (!["target", "published", "host_ip", "protocol", "mode", "name", "app_protocol"].includes(key)) {
        return { error: `unknown key "${key}"` };
      }
    }
    return { ok: [{ target, published: published[0]!, protocol, hostIp: String(v.host_ip ?? "") }] };
  }
  if (typeof value !== "string") return { error: `must be a port mapping such as "8080:80", got ${show(value)}` };
  const bad = { error: `"${value}" is not a port mapping ([[host_ip:]host:]container[/tcp|udp], ports 1..65535)` };
  let rest = value.trim();
  let protocol: "tcp" | "udp" = "tcp";
  const slash = rest.lastIndexOf("/");
  if (slash >= 0) {
    const p = rest.slice(slash + 1).toLowerCase();
    if (p !== "tcp" && p !== "udp") return bad;
    protocol = p;
    rest = rest.slice(0, slash);
  }
  let hostIp = "";
  const bracket = /^\[([0-9a-fA-F:]+)\]:(.*)$/.exec(rest);
  if (bracket) {
    hostIp = bracket[1]!;
    rest = bracket[2]!;
  }
  const parts = rest.split(":");
  if (parts.length > 3 || (bracket && parts.length !== 2)) return bad;
  if (parts.length === 3) hostIp = parts.shift()!;
  if (hostIp && !/^[0-9a-fA-F.:]+$/.test(hostIp)) return bad;
  const target = portRange(parts.pop()!, false);
  const hostText = parts.pop();
  const published = hostText === undefined || hostText === "" ? undefined : portRange(hostText, true);
  if (!target || (hostText && !published)) return bad;
  if (published && published.length !== target.length) return bad;
  return {
    ok: target.map((t, i) => ({
      target: t,
      published: published ? published[i]! : 0,
      protocol,
      hostIp,
    })),
  };
}

/**
 * One `volumes:` entry of a service: short syntax `SOURCE:TARGET[:MODE]` / `TARGET` (anonymous), or
 * the long form `{type, source, target, read_only}`. A source starting with `/`, `.` or `~` is a
 * bind mount; relative ones resolve against `projectDir` (undefined: refused, inline files have no
 * directory).
 */
export function parseMount(value: unknown, projectDir: string | undefined): Parsed<ComposeMount> {
  let type: string;
  let source: string;
  let target: string;
  let readOnly = false;
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    for (const key of Object.keys(v)) {
      if (!["type", "source", "target", "read_only", "volume", "bind", "consistency"].includes(key))
        return { error: `unknown key "${key}"` };
    }
    type = String(v.type ?? "volume");
    source = v.source === undefined ? "" : String(v.source);
    target = String(v.target ?? "");
    readOnly = v.read_only === true;
  } else if (typeof value === "string") {
    const parts = value.split(":");
    if (parts.length === 1) {
      type = "volume";
      source = "";
      target = parts[0]!;
    } else if (parts.length <= 3) {
      source = parts[0]!;
      target = parts[1]!;
      const mode = parts[2] ?? "rw";
      const flags = mode.split(",");
      if (!flags.every((f) => ["ro", "rw", "z", "Z", "cached", "delegated", "consistent", "nocopy"].includes(f)))
        return { error: `mode "${mode}" must be ro or rw` };
      readOnly = flags.includes("ro");
      type = /^[/.~]/.test(source) ? "bind" : "volume";
    } else return { error: `"${value}" is not a volume mount (source:target[:ro])` };
  } else return { error: `must be a volume mount such as "data:/data", got ${show(value)}` };
  if (type !== "volume" && type !== "bind" && type !== "tmpfs")
    return { error: `type "${type}" is not supported (volume, bind or tmpfs)` };
  if (!target.startsWith("/")) return { error: `target must be an absolute path, got ${show(target)}` };
  if (type === "bind") {
    if (source.startsWith("~"))
      return { error: `bind source "${source}": "~" is not expanded on nodes; use an absolute path` };
    if (!source.startsWith("/")) {
      if (projectDir === undefined)
        return {
          error: `bind source "${source}" is relative, and an inline compose file has no directory; use an absolute path`,
        };
      const joined = `${projectDir}/${source}`.split("/");
      const stack: string[] = [];
      for (const seg of joined) {
        if (seg === "..") stack.pop();
        else if (seg && seg !== ".") stack.push(seg);
      }
      source = `/${stack.join("/")}`;
    }
  } else if (type === "volume" && source && !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(source))
    return { error: `volume name "${source}" must be letters, digits, '_', '.' and '-'` };
  return { ok: { type, source, target, readOnly } };
}

/** A short rendering of a value for messages. */
export function show(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
