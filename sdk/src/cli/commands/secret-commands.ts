import { readFileSync } from "node:fs";
import { Command } from "commander";
import { api } from "../../index.js";
import { outputFormat } from "../cli-context.js";
import { CliError } from "../exit-codes.js";
import { renderTable } from "../output/table.js";
import { type CliRun, examples, handle, outputOption } from "./command-kit.js";

const formats = ["table", "json", "yaml"] as const;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `k=v` → [k, v]; the value is never echoed in an error. */
function pair(text: string, flag: string): [string, string] {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new CliError(`${flag} expects KEY=VALUE (got a value without a key)`);
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** The data of `secret create`: literals as text, files as bytes. */
export function secretDataOf(literals: readonly string[], files: readonly string[]): Record<string, string | Buffer> {
  const data: Record<string, string | Buffer> = {};
  const add = (key: string, value: string | Buffer, flag: string) => {
    if (Object.hasOwn(data, key)) throw new CliError(`${flag}: key ${key} is given twice`);
    data[key] = value;
  };
  for (const literal of literals) {
    const [key, value] = pair(literal, "--from-literal");
    add(key, value, "--from-literal");
  }
  for (const file of files) {
    const [key, path] = pair(file, "--from-file");
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      throw new CliError(
        `--from-file ${key}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
    add(key, bytes, "--from-file");
  }
  if (Object.keys(data).length === 0) throw new CliError("give at least one --from-literal or --from-file");
  return data;
}

const row = (s: api.SecretMetadata) => [
  s.name,
  s.keys.join(","),
  String(s.version),
  s.updatedAt?.toISOString() ?? "",
  s.usedBy.join(",") || "-",
];

/** `persysctl secret create|list|get|delete`: values go in, only metadata comes out. */
export function secretCommand(run: CliRun): Command {
  const secret = new Command("secret").description("secrets for workloads: create, list, get (metadata), delete");
  examples(secret, [
    "persysctl secret create db --from-literal password=s3cr3t",
    "persysctl secret create tls --from-file tls.crt=./server.crt --from-file tls.key=./server.key",
  ]);

  const create = new Command("create")
    .description("create or replace a secret (idempotent: the same data keeps the version)")
    .argument("<name>", "secret name (DNS-1123 label)")
    .option("--from-literal <key=value>", "a key and its value (repeatable)", collect, [])
    .option("--from-file <key=path>", "a key and a file holding its value (repeatable)", collect, [])
    .addOption(outputOption([...formats]));
  examples(create, ["persysctl secret create db --from-literal password=s3cr3t --from-file ca.crt=./ca.crt"]);
  handle<{ fromLiteral: string[]; fromFile: string[]; output?: string }>(run, create, async (ctx, [name], o) => {
    const format = outputFormat(o.output, formats);
    const result = await ctx.client().secrets.put(name!, secretDataOf(o.fromLiteral, o.fromFile));
    const meta = result.secret!;
    if (format !== "table") ctx.printObjects([api.SecretMetadata.toJSON(meta)], format, true);
    else {
      const what = result.created ? "created" : result.changed ? "configured" : "unchanged";
      ctx.out(`secret/${meta.name} ${what} (version ${meta.version})\n`);
    }
    return 0;
  });

  const list = new Command("list").description("every secret (metadata only)").addOption(outputOption([...formats]));
  examples(list, ["persysctl secret list", "persysctl secret list -o json"]);
  handle<{ output?: string }>(run, list, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const secrets = await ctx.client().secrets.list();
    if (format !== "table")
      ctx.printObjects(
        secrets.map((s) => api.SecretMetadata.toJSON(s)),
        format,
        false,
      );
    else ctx.out(renderTable(["NAME", "KEYS", "VERSION", "UPDATED", "USED-BY"], secrets.map(row)));
    return 0;
  });

  const get = new Command("get")
    .description("one secret's metadata (keys, version, users); never its values")
    .argument("<name>", "secret name")
    .addOption(outputOption([...formats]));
  examples(get, ["persysctl secret get db -o yaml"]);
  handle<{ output?: string }>(run, get, async (ctx, [name], o) => {
    const format = outputFormat(o.output, formats);
    const meta = await ctx.client().secrets.get(name!);
    if (format !== "table") ctx.printObjects([api.SecretMetadata.toJSON(meta)], format, true);
    else ctx.out(renderTable(["NAME", "KEYS", "VERSION", "UPDATED", "USED-BY"], [row(meta)]));
    return 0;
  });

  const del = new Command("delete")
    .description("delete a secret (refused while workloads use it, unless --force)")
    .argument("<name>", "secret name")
    .option("--force", "delete even while workloads reference it");
  examples(del, ["persysctl secret delete db", "persysctl secret delete db --force"]);
  handle<{ force?: boolean }>(run, del, async (ctx, [name], o) => {
    const deleted = await ctx.client().secrets.delete(name!, { force: o.force ?? false });
    ctx.out(`secret/${name} ${deleted ? "deleted" : "not found (nothing to delete)"}\n`);
    return 0;
  });

  for (const sub of [create, list, get, del]) secret.addCommand(sub);
  return secret;
}
