import { Command } from "commander";
import { readClientConfig, saveContext, useContext } from "../../index.js";
import type { CliContext } from "../cli-context.js";
import { CliError } from "../exit-codes.js";
import { renderTable } from "../output/table.js";
import { type CliRun, examples, handle } from "./command-kit.js";

/** The contexts table of `config get-contexts` and `cluster list`: `*` marks the one in use. */
export function printContexts(ctx: CliContext): number {
  const found = ctx.discovery();
  const file = readClientConfig(found.configPath);
  if (!file || file.contexts.length === 0) {
    ctx.err(`No contexts in ${found.configPath}. Add one: persysctl config set-context NAME --endpoint HOST:PORT`);
    return 0;
  }
  const current = found.context?.name;
  const rows = file.contexts.map((c) => [
    c.name === current ? "*" : "",
    c.name,
    c.endpoint,
    c.token ? "token" : "",
    c.clientCert ? "mtls" : c.caCert ? "tls" : "",
  ]);
  ctx.out(renderTable(["CURRENT", "NAME", "ENDPOINT", "AUTH", "TLS"], rows));
  return 0;
}

interface SetContextOptions {
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  use?: boolean;
}

/** `persysctl config get-contexts|use-context|current-context|set-context`. */
export function configCommand(run: CliRun): Command {
  const config = new Command("config").description(
    "client contexts in ~/.persys/config.yaml (or --config / PERSYS_CONFIG)",
  );
  const getContexts = new Command("get-contexts").description("list the contexts; * marks the one in use");
  examples(getContexts, ["persysctl config get-contexts", "PERSYS_CONFIG=./ci.yaml persysctl config get-contexts"]);
  handle(run, getContexts, (ctx) => printContexts(ctx));
  const useCmd = new Command("use-context")
    .description("make a context the current one")
    .argument("<name>", "context name");
  examples(useCmd, ["persysctl config use-context prod"]);
  handle(run, useCmd, (ctx, [name]) => {
    useContext(ctx.discovery().configPath, name!);
    ctx.out(`Switched to context "${name}".\n`);
    return 0;
  });
  const current = new Command("current-context").description(
    "print the context in use and where the endpoint comes from",
  );
  examples(current, ["persysctl config current-context", "persysctl --context prod config current-context"]);
  handle(run, current, (ctx) => {
    const found = ctx.discovery();
    ctx.out(`${found.context?.name ?? "(none)"}\n`);
    ctx.err(`endpoint ${found.endpoint} (from ${found.endpointSource})`);
    return 0;
  });
  const set = new Command("set-context")
    .description(
      "add or replace a context from --endpoint (required) and --token (the first one added becomes current)",
    )
    .argument("<name>", "context name")
    .option("--ca-cert <path>", "CA certificate (PEM file)")
    .option("--client-cert <path>", "client certificate for mTLS (PEM file)")
    .option("--client-key <path>", "client key for mTLS (PEM file)")
    .option("--use", "also make it the current context");
  examples(set, [
    "persysctl config set-context local --endpoint 127.0.0.1:7070",
    "persysctl config set-context prod --endpoint cp.example:7443 --token $TOKEN --ca-cert ca.pem --use",
  ]);
  handle<SetContextOptions>(run, set, (ctx, [name], o) => {
    const { endpoint, token } = ctx.globals;
    if (!endpoint) throw new CliError("config set-context: give the context's endpoint with --endpoint HOST:PORT");
    const path = ctx.discovery().configPath;
    saveContext(path, {
      name: name!,
      endpoint,
      token,
      caCert: o.caCert,
      clientCert: o.clientCert,
      clientKey: o.clientKey,
    });
    if (o.use) useContext(path, name!);
    ctx.out(`Context "${name}" saved in ${path}.\n`);
    return 0;
  });
  for (const sub of [getContexts, useCmd, current, set]) config.addCommand(sub);
  examples(config, [
    "persysctl config set-context prod --endpoint cp.example:7070 --ca-cert ~/.persys/ca.pem",
    "persysctl config get-contexts",
    "persysctl config use-context prod",
  ]);
  return config;
}
