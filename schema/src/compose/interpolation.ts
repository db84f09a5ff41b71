/**
 * Compose variable interpolation (compose-spec "Interpolation"): `$VAR`, `${VAR}`, `${VAR:-default}`
 * (unset or empty), `${VAR-default}` (unset), `${VAR:?message}` / `${VAR?message}` (required),
 * `${VAR:+alternative}` / `${VAR+alternative}`, nested forms such as `${A:-${B:-x}}`, and `$$` for a
 * literal `$`.
 */

/** A variable a value needs that is not set (and has no default). */
export class InterpolationError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "InterpolationError";
  }
}

const nameStart = /[A-Za-z_]/;
const nameChar = /[A-Za-z0-9_]/;

/**
 * Interpolates one string. Throws InterpolationError for a variable used without a default that is
 * not in `env` (compose would substitute an empty string with a warning; Persys refuses, so a typo
 * never deploys an empty value), for `${VAR:?err}` of an unset variable, and for malformed syntax.
 */
export function interpolate(value: string, env: Readonly<Record<string, string>>): string {
  const [out, end] = scan(value, 0, env, false);
  if (end !== value.length) throw new InterpolationError("", `unexpected "}" at offset ${end} in "${value}"`);
  return out;
}

/** Scans from `at` until the end (or an unmatched `}` when `nested`); returns the text and where it stopped. */
function scan(s: string, at: number, env: Readonly<Record<string, string>>, nested: boolean): [string, number] {
  let out = "";
  let i = at;
  while (i < s.length) {
    const c = s[i]!;
    if (nested && c === "}") return [out, i];
    if (c !== "$") {
      out += c;
      i++;
      continue;
    }
    const next = s[i + 1];
    if (next === "$") {
      out += "$";
      i += 2;
    } else if (next === "{") {
      const [text, end] = braced(s, i + 2, env);
      out += text;
      i = end;
    } else if (next !== undefined && nameStart.test(next)) {
      let j = i + 1;
      while (j < s.length && nameChar.test(s[j]!)) j++;
      out += lookup(s.slice(i + 1, j), env);
      i = j;
    } else {
      out += "$";
      i++;
    }
  }
  if (nested) throw new InterpolationError("", `missing "}" in "${s}"`);
  return [out, i];
}

function lookup(name: string, env: Readonly<Record<string, string>>): string {
  const value = env[name];
  if (value === undefined) {
    throw new InterpolationError(name, `variable ${name} is not set and has no default (use \${${name}:-default})`);
  }
  return value;
}

/** `${...}` starting after the brace; returns the substitution and the index after the closing brace. */
function braced(s: string, at: number, env: Readonly<Record<string, string>>): [string, number] {
  let j = at;
  while (j < s.length && nameChar.test(s[j]!)) j++;
  const name = s.slice(at, j);
  if (!name || !nameStart.test(name[0]!)) throw new InterpolationError(name, `invalid variable reference in "${s}"`);
  if (s[j] === "}") return [lookup(name, env), j + 1];
  const colon = s[j] === ":";
  const op = s[colon ? j + 1 : j];
  if (op !== "-" && op !== "?" && op !== "+") throw new InterpolationError(name, `invalid substitution in "${s}"`);
  const [word, end] = scan(s, j + (colon ? 2 : 1), env, true);
  const value = env[name];
  const unset = value === undefined || (colon && value === "");
  let result: string;
  if (op === "-") result = unset ? word : value!;
  else if (op === "+") result = unset ? "" : word;
  else {
    if (unset) throw new InterpolationError(name, word ? `variable ${name}: ${word}` : `variable ${name} is required`);
    result = value!;
  }
  return [result, end + 1];
}
