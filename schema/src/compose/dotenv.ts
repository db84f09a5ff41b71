/**
 * Parses a `.env` / `env_file` file as Compose reads it: `KEY=VALUE` lines, `export KEY=VALUE`,
 * `#` comments (whole line, or after a space in an unquoted value), single quotes (literal), double
 * quotes (with `\n`, `\t`, `\\`, `\"` escapes), and `KEY` alone (the variable is taken from `lookup`,
 * and left out when it has none). Values are not interpolated.
 *
 * Returns the variables in file order, or the 1-based line of the first malformed line.
 */
export function parseDotenv(
  text: string,
  lookup: (name: string) => string | undefined = () => undefined,
): { env: Record<string, string> } | { line: number; reason: string } {
  const env: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    if (!line || line.startsWith("#")) continue;
    const body = line.startsWith("export ") ? line.slice(7).trimStart() : line;
    const eq = body.indexOf("=");
    const key = (eq < 0 ? body : body.slice(0, eq)).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key)) return { line: n + 1, reason: `"${key}" is not a variable name` };
    if (eq < 0) {
      const value = lookup(key);
      if (value !== undefined) env[key] = value;
      continue;
    }
    const raw = body.slice(eq + 1).trim();
    const q = raw[0];
    if (q === "'" || q === '"') {
      const close = raw.indexOf(q, 1);
      if (close < 0) return { line: n + 1, reason: `unterminated ${q} quote` };
      const inner = raw.slice(1, close);
      env[key] =
        q === "'" ? inner : inner.replace(/\\([nt"\\])/g, (_m, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
    } else {
      const hash = raw.search(/\s#/);
      env[key] = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    }
  }
  return { env };
}
