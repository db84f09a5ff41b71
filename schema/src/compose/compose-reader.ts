import type { FieldViolation } from "../errors/persys-error.js";
import type { KeyClass } from "./compose-keys.js";
import type { ComposeWarning } from "./compose-model.js";
import { type Parsed, show } from "./compose-values.js";

export type Raw = Record<string, unknown>;

/**
 * Collects violations and warnings of one Compose file while it is normalised, under field paths in
 * the file (`services.web.ports[0]`). Readers never throw; they record and return a fallback.
 */
export class ComposeReader {
  readonly violations: FieldViolation[] = [];
  readonly warnings: ComposeWarning[] = [];

  constructor(readonly file: string) {}

  fail(path: string, reason: string): void {
    this.violations.push({ path, reason });
  }

  warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }

  /** The mapping at `path`, or undefined (recorded) when it is something else. Absent → `{}`. */
  map(value: unknown, path: string): Raw | undefined {
    if (value === undefined || value === null) return {};
    if (typeof value === "object" && !Array.isArray(value)) return value as Raw;
    this.fail(path, `must be a mapping, got ${show(value)}`);
    return undefined;
  }

  /** Applies the unsupported-key rule to the keys of one mapping. */
  keys(value: Raw, table: Readonly<Record<string, KeyClass>>, path: string): void {
    for (const key of Object.keys(value)) {
      if (key.startsWith("x-")) continue;
      const c = table[key];
      const at = path ? `${path}.${key}` : key;
      if (c === undefined) this.fail(at, `unsupported key "${key}" (see docs/compose.md for the keys Persys supports)`);
      else if (c !== "supported") this.warn(at, `ignored: ${c.ignored}`);
    }
  }

  string(value: unknown, path: string, fallback = ""): string {
    if (value === undefined || value === null) return fallback;
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    this.fail(path, `must be a string, got ${show(value)}`);
    return fallback;
  }

  boolean(value: unknown, path: string, fallback = false): boolean {
    if (value === undefined || value === null) return fallback;
    if (typeof value === "boolean") return value;
    if (value === "true" || value === "false") return value === "true";
    this.fail(path, `must be true or false, got ${show(value)}`);
    return fallback;
  }

  integer(value: unknown, path: string, fallback: number, min = 0): number {
    if (value === undefined || value === null) return fallback;
    const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    if (typeof n === "number" && Number.isInteger(n) && n >= min) return n;
    this.fail(path, `must be an integer >= ${min}, got ${show(value)}`);
    return fallback;
  }

  /** A string list; a single string becomes a one-item list. */
  strings(value: unknown, path: string): string[] {
    if (value === undefined || value === null) return [];
    if (typeof value === "string") return [value];
    if (Array.isArray(value)) return value.map((v, i) => this.string(v, `${path}[${i}]`));
    this.fail(path, `must be a list of strings, got ${show(value)}`);
    return [];
  }

  /** A command: a list as is, or a string split like a shell word list (quotes respected). */
  command(value: unknown, path: string): string[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return value.map((v, i) => this.string(v, `${path}[${i}]`));
    if (typeof value === "string") {
      const words = shellWords(value);
      if (words) return words;
      this.fail(path, `has an unterminated quote: ${show(value)}`);
      return undefined;
    }
    this.fail(path, `must be a string or a list of strings, got ${show(value)}`);
    return undefined;
  }

  /** `KEY=VALUE` list or mapping (labels, environment): null values go through `missing`. */
  dict(value: unknown, path: string, missing: (key: string) => string | undefined = () => ""): Record<string, string> {
    const out: Record<string, string> = {};
    if (value === undefined || value === null) return out;
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) {
        const text = this.string(item, `${path}[${i}]`);
        const eq = text.indexOf("=");
        const key = eq < 0 ? text : text.slice(0, eq);
        if (!key) {
          this.fail(`${path}[${i}]`, `must be KEY=VALUE, got ${show(item)}`);
          continue;
        }
        const v = eq < 0 ? missing(key) : text.slice(eq + 1);
        if (v !== undefined) out[key] = v;
      }
      return out;
    }
    const map = this.map(value, path);
    for (const [key, v] of Object.entries(map ?? {})) {
      if (v === null || v === undefined) {
        const m = missing(key);
        if (m !== undefined) out[key] = m;
      } else out[key] = this.string(v, `${path}.${key}`);
    }
    return out;
  }

  /** Records a Parsed failure; returns the value or the fallback. */
  parsed<T>(result: Parsed<T>, path: string, fallback: T): T {
    if ("ok" in result) return result.ok;
    this.fail(path, result.error);
    return fallback;
  }
}

/** Splits a command string into words as a POSIX shell would (quotes and backslashes; no expansion). */
export function shellWords(s: string): string[] | undefined {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && (s[i + 1] === '"' || s[i + 1] === "\\")) word += s[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < s.length) {
      word += s[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return undefined;
  if (inWord) words.push(word);
  return words;
}
