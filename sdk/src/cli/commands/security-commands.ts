import { chmodSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { api, discoverClientOptions, PersysClient, saveContext, type UserRoleName } from "../../index.js";
import { outputFormat, parseDuration } from "../cli-context.js";
import { CliError } from "../exit-codes.js";
import { renderTable } from "../output/table.js";
import { type CliRun, examples, handle, outputOption } from "./command-kit.js";

const formats = ["table", "json", "yaml"] as const;
const roles: readonly UserRoleName[] = ["admin", "operator", "viewer"];
const time = (d: Date | undefined) => d?.toISOString() ?? "never";

function roleOf(value: string): UserRoleName {
  if (!(roles as readonly string[]).includes(value))
    throw new CliError(`--role ${value}: use one of ${roles.join(", ")}`);
  return value as UserRoleName;
}

/** Applies persysctl's exit and output handling to commands nested below the first level. */
function nested(run: CliRun, command: Command): Command {
  for (const sub of command.commands) {
    sub.exitOverride().configureOutput({
      writeOut: (text) => run.io.stdout.write(text),
      writeErr: (text) => run.io.stderr.write(text),
    });
  }
  return command;
}

/** `persysctl whoami`. */
export function whoamiCommand(run: CliRun): Command {
  const whoami = new Command("whoami")
    .description("who the control plane says you are: name, role and how you authenticated")
    .addOption(outputOption([...formats]));
  examples(whoami, ["persysctl whoami", "persysctl --token $PERSYS_TOKEN whoami -o json"]);
  handle<{ output?: string }>(run, whoami, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const me = await ctx.client().security.whoAmI();
    if (format !== "table") ctx.printObjects([me], format, true);
    else ctx.out(`${me.name} (role ${me.role}, via ${me.via}${me.nodeId ? `, node ${me.nodeId}` : ""})\n`);
    return 0;
  });
  return whoami;
}

/** `persysctl token create|list|revoke`. */
export function tokenCommand(run: CliRun): Command {
  const token = new Command("token").description("API bearer tokens for CI and apps (admin)");
  examples(token, ["persysctl token create --name ci --role operator --ttl 24h", "persysctl token list"]);

  const create = new Command("create")
    .description("create a token; its value is printed once and cannot be shown again")
    .requiredOption("--name <name>", "the token's name (shown in audit records)")
    .requiredOption("--role <role>", `one of ${roles.join(", ")}`)
    .option("--ttl <duration>", "lifetime, e.g. 24h (default: no expiry)")
    .addOption(outputOption([...formats]));
  examples(create, ["persysctl token create --name ci --role operator --ttl 24h"]);
  handle<{ name: string; role: string; ttl?: string; output?: string }>(run, create, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const created = await ctx.client().security.createApiToken({
      name: o.name,
      role: roleOf(o.role),
      ttlMs: o.ttl ? parseDuration(o.ttl, "--ttl") : undefined,
    });
    if (format !== "table") {
      ctx.printObjects([{ token: created.token, apiToken: api.ApiToken.toJSON(created.apiToken) }], format, true);
    } else {
      ctx.out(`${created.token}\n`);
      ctx.err(
        `token ${created.apiToken.id} (${created.apiToken.name}, ${created.apiToken.role}) expires ${time(created.apiToken.expiresAt)}; ` +
          "store it now: it is not shown again",
      );
    }
    return 0;
  });

  const list = new Command("list")
    .description("every token (never their values)")
    .addOption(outputOption([...formats]));
  examples(list, ["persysctl token list", "persysctl token list -o json"]);
  handle<{ output?: string }>(run, list, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const tokens = await ctx.client().security.listApiTokens();
    if (format !== "table")
      ctx.printObjects(
        tokens.map((t) => api.ApiToken.toJSON(t)),
        format,
        false,
      );
    else
      ctx.out(
        renderTable(
          ["ID", "NAME", "ROLE", "CREATED", "EXPIRES"],
          tokens.map((t) => [t.id, t.name, t.role, time(t.createdAt), time(t.expiresAt)]),
        ),
      );
    return 0;
  });

  const revoke = new Command("revoke").description("revoke a token (idempotent)").argument("<id>", "token id");
  examples(revoke, ["persysctl token revoke k3j5h2g8d9s1"]);
  handle(run, revoke, async (ctx, [id]) => {
    const revoked = await ctx.client().security.revokeApiToken(id!);
    ctx.out(`token/${id} ${revoked ? "revoked" : "not found (nothing to revoke)"}\n`);
    return 0;
  });

  for (const sub of [create, list, revoke]) token.addCommand(sub);
  return token;
}

/** `persysctl node join-token create|list|revoke`, added to the `node` command. */
export function joinTokenCommand(run: CliRun): Command {
  const joinToken = new Command("join-token").description("one-time tokens with which agents join the cluster (admin)");
  examples(joinToken, ["persysctl node join-token create --ttl 1h", "persysctl node join-token list"]);

  const create = new Command("create")
    .description("create a join token (printed once); give it to persys-agent with the CA pin printed beside it")
    .option("--ttl <duration>", "lifetime (default 1h)")
    .option("--description <text>", "shown in listings")
    .addOption(outputOption([...formats]));
  examples(create, ["persysctl node join-token create --ttl 30m --description 'rack 4'"]);
  handle<{ ttl?: string; description?: string; output?: string }>(run, create, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const created = await ctx.client().security.createJoinToken({
      ttlMs: o.ttl ? parseDuration(o.ttl, "--ttl") : undefined,
      description: o.description,
    });
    if (format !== "table") {
      ctx.printObjects(
        [{ token: created.token, caCertHash: created.caCertHash, joinToken: api.JoinToken.toJSON(created.joinToken) }],
        format,
        true,
      );
    } else {
      ctx.out(`${created.token}\n`);
      ctx.err(
        `join token ${created.joinToken.id} works once, until ${time(created.joinToken.expiresAt)}.\n` +
          `CA pin: ${created.caCertHash}\n` +
          `join a node: persys-agent --node-id <id> --control-plane-endpoints ${ctx.discovery().endpoint} ` +
          `--tls-join-token <token> --tls-ca-cert-hash ${created.caCertHash}`,
      );
    }
    return 0;
  });

  const list = new Command("list")
    .description("join tokens, used and expired ones included")
    .addOption(outputOption([...formats]));
  examples(list, ["persysctl node join-token list", "persysctl node join-token list -o yaml"]);
  handle<{ output?: string }>(run, list, async (ctx, _args, o) => {
    const format = outputFormat(o.output, formats);
    const tokens = await ctx.client().security.listJoinTokens();
    if (format !== "table")
      ctx.printObjects(
        tokens.map((t) => api.JoinToken.toJSON(t)),
        format,
        false,
      );
    else
      ctx.out(
        renderTable(
          ["ID", "STATE", "EXPIRES", "DESCRIPTION"],
          tokens.map((t) => [
            t.id,
            t.used ? `used by ${t.usedBy}` : t.expired ? "expired" : "unused",
            time(t.expiresAt),
            t.description,
          ]),
        ),
      );
    return 0;
  });

  const revoke = new Command("revoke")
    .description("revoke a join token (idempotent)")
    .argument("<id>", "join token id");
  examples(revoke, ["persysctl node join-token revoke 7f3k2a"]);
  handle(run, revoke, async (ctx, [id]) => {
    const revoked = await ctx.client().security.revokeJoinToken(id!);
    ctx.out(`join-token/${id} ${revoked ? "revoked" : "not found (nothing to revoke)"}\n`);
    return 0;
  });

  for (const sub of [create, list, revoke]) joinToken.addCommand(sub);
  return nested(run, joinToken);
}

/** Writes a file atomically with `mode`. */
function writePrivate(path: string, text: string, mode: number): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
}

/**
 * `persysctl user cert NAME --role R --context C`. Here `--context` names the context to save (it
 * usually does not exist yet); the call goes where persysctl would go without it (flags,
 * PERSYS_CONTEXT, the environment, the current context).
 */
export function userCommand(run: CliRun): Command {
  const user = new Command("user").description("client certificates for people and tools (admin)");
  examples(user, ["persysctl user cert alice --role viewer --context alice@prod"]);
  const cert = new Command("cert")
    .description("issue a client certificate (CN name, O role), write it under ~/.persys and save a context using it")
    .argument("<name>", "user or tool name: 1-128 of A-Z a-z 0-9 . _ @ -")
    .requiredOption("--role <role>", `one of ${roles.join(", ")}`)
    .option("--out <dir>", "folder for the files (default ~/.persys/certs/<context>)")
    .option("--ttl <duration>", "lifetime, e.g. 720h (default: the cluster's, one year)")
    .addOption(outputOption([...formats]))
    .addHelpText(
      "after",
      "\n--context <name> (the global flag) names the context to save, default the user name; the certificate is\n" +
        "asked for where persysctl goes without it (--endpoint, PERSYS_CONTEXT, PERSYS_ENDPOINT, the current context).\n",
    );
  examples(cert, [
    "persysctl user cert alice --role viewer --context alice@prod",
    "persysctl --context alice@prod whoami",
  ]);
  handle<{ role: string; out?: string; ttl?: string; output?: string }>(run, cert, async (ctx, [name], o) => {
    const format = outputFormat(o.output, formats);
    const g = ctx.globals;
    const contextName = g.context ?? name!;
    const found = discoverClientOptions({
      env: ctx.io.env,
      configPath: g.config,
      overrides: {
        ...(g.endpoint ? { endpoint: g.endpoint } : {}),
        ...(g.token ? { token: g.token } : {}),
        ...(g.timeout ? { timeoutMs: parseDuration(g.timeout, "--timeout") } : {}),
      },
    });
    const client = new PersysClient(found.options);
    const issued = await client.security
      .issueUserCertificate({
        name: name!,
        role: roleOf(o.role),
        ttlMs: o.ttl ? parseDuration(o.ttl, "--ttl") : undefined,
      })
      .finally(() => client.close());
    const home = ctx.io.env.HOME || homedir();
    const dir = resolve(o.out ?? join(home, ".persys", "certs", contextName));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const files = {
      caCert: join(dir, "ca.crt"),
      clientCert: join(dir, `${name}.crt`),
      clientKey: join(dir, `${name}.key`),
    };
    writePrivate(files.clientKey, issued.keyPem ?? "", 0o600);
    writePrivate(files.clientCert, issued.certPem, 0o644);
    writePrivate(files.caCert, issued.caPem, 0o644);
    const endpoint = found.endpoint.includes("://") ? found.endpoint : `https://${found.endpoint}`;
    saveContext(found.configPath, { name: contextName, endpoint, ...files });
    const summary = {
      name,
      role: o.role,
      context: contextName,
      configPath: found.configPath,
      notAfter: time(issued.notAfter),
      ...files,
    };
    if (format !== "table") ctx.printObjects([summary], format, true);
    else
      ctx.out(
        `certificate ${files.clientCert} (CN=${name}, O=${o.role}, expires ${summary.notAfter}), key ${files.clientKey} (0600)\n` +
          `context "${contextName}" saved in ${found.configPath}: persysctl --context ${contextName} whoami\n`,
      );
    return 0;
  });
  user.addCommand(cert);
  return user;
}
