/**
 * `persys pki`: the cluster CA's certificates made directly from the data dir, with no server
 * running (as kubeadm's `certs` phase): the CA itself, and client certificates for people and tools
 * with a persysctl context that uses them.
 */
import { X509Certificate } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { caPublicKeyPin, defaultConfigPath, PersysError, saveContext } from "@persys/schema";
import type { Command } from "commander";
import { CA_CERT_FILE, ClusterCa, type IssuedCertificate } from "../pki/cluster-ca.js";
import { isUserRole, USER_ROLES, type UserRole } from "../pki/principal.js";
import { CERT_FILE_MODE, KEY_DIR_MODE, KEY_FILE_MODE, writeFileAtomic } from "../pki/private-file.js";
import { fail } from "./cli-failure.js";

/** Where the data dir keeps the cluster CA (as the server's TLS setup does). */
export const pkiDirOf = (dataDir: string) => join(dataDir, "pki");

const DEFAULT_DATA_DIR = join(homedir(), ".persys", "data");
const DEFAULT_ENDPOINT = "https://127.0.0.1:7070";

/** What `persys pki ca` reports. */
export interface CaSummary {
  readonly certPath: string;
  readonly created: boolean;
  /** SHA-256 of the certificate (DER), colon-separated hex as openssl prints it. */
  readonly fingerprint: string;
  /** `sha256:<hex>` of the public key: what agents pin to join. */
  readonly pin: string;
  readonly notAfter: Date;
}

/** Loads the data dir's cluster CA, creating it when absent, and summarises it. */
export async function describeCa(dataDir: string): Promise<CaSummary & { ca: ClusterCa }> {
  const dir = pkiDirOf(dataDir);
  const ca = await ClusterCa.loadOrCreate(dir);
  return {
    ca,
    certPath: join(dir, CA_CERT_FILE),
    created: ca.created,
    fingerprint: new X509Certificate(ca.certPem).fingerprint256,
    pin: caPublicKeyPin(ca.certPem),
    notAfter: ca.notAfter,
  };
}

/** Where `writeUserFiles` put the files. */
export interface UserFiles {
  readonly certPath: string;
  readonly keyPath: string;
  readonly caPath: string;
}

/**
 * Writes `<name>.crt`, `<name>.key` (mode 0600) and `ca.crt` into `dir` (created with mode 0700),
 * each atomically, replacing older files of the same name.
 */
export async function writeUserFiles(dir: string, name: string, issued: IssuedCertificate): Promise<UserFiles> {
  await mkdir(dir, { recursive: true, mode: KEY_DIR_MODE });
  const files = { certPath: join(dir, `${name}.crt`), keyPath: join(dir, `${name}.key`), caPath: join(dir, "ca.crt") };
  await writeFileAtomic(files.keyPath, issued.keyPem, KEY_FILE_MODE);
  await writeFileAtomic(files.certPath, issued.certPem, CERT_FILE_MODE);
  await writeFileAtomic(files.caPath, issued.caPem, CERT_FILE_MODE);
  return files;
}

export interface IssueUserOptions {
  readonly dataDir: string;
  readonly name: string;
  readonly role: UserRole;
  /** Default `~/.persys/certs/<context or name>`. */
  readonly out?: string;
  /** Save a persysctl context of this name with the files. */
  readonly context?: string;
  readonly endpoint?: string;
  /** Client config file; default `PERSYS_CONFIG`, else `~/.persys/config.yaml`. */
  readonly configPath?: string;
  readonly validityMs?: number;
}

/**
 * Issues a user certificate from the data dir's CA (created when absent), writes its files and, with
 * `context`, saves a persysctl context (endpoint, CA, certificate, key) in the client config.
 *
 * @throws PersysError INVALID_ARGUMENT for a bad name or role; INVALID_CONFIG for unusable CA files.
 */
export async function issueUserFromDataDir(
  options: IssueUserOptions,
): Promise<UserFiles & { notAfter: Date; contextSaved?: string; configPath?: string }> {
  const { ca } = await describeCa(options.dataDir);
  const issued = await ca.issueUser(
    options.name,
    options.role,
    options.validityMs ? { validityMs: options.validityMs } : {},
  );
  const out = resolve(options.out ?? join(homedir(), ".persys", "certs", options.context ?? options.name));
  const files = await writeUserFiles(out, options.name, issued);
  if (!options.context) return { ...files, notAfter: issued.notAfter };
  const configPath = options.configPath ?? defaultConfigPath();
  saveContext(configPath, {
    name: options.context,
    endpoint: options.endpoint ?? DEFAULT_ENDPOINT,
    caCert: files.caPath,
    clientCert: files.certPath,
    clientKey: files.keyPath,
  });
  return { ...files, notAfter: issued.notAfter, contextSaved: options.context, configPath };
}

/** Adds `persys pki ca` and `persys pki user` to the `persys` program. */
export function registerPkiCommands(program: Command): void {
  const pki = program
    .command("pki")
    .description("the cluster CA in the data dir: show it, issue user certificates (no server needed)");

  pki
    .command("ca")
    .description("print the cluster CA's path, fingerprint and join pin (creating the CA when absent)")
    .option("--data-dir <dir>", "the control plane's data dir", DEFAULT_DATA_DIR)
    .addHelpText("after", "\nExample:\n  persys pki ca --data-dir /var/lib/persys")
    .action(async (o: { dataDir: string }) => {
      try {
        const s = await describeCa(o.dataDir);
        console.log(
          [
            `CA certificate: ${s.certPath}${s.created ? " (created now)" : ""}`,
            `SHA-256 fingerprint: ${s.fingerprint}`,
            `public key pin: ${s.pin}   (persys-agent --tls-ca-cert-hash ${s.pin})`,
            `expires: ${s.notAfter.toISOString()}`,
          ].join("\n"),
        );
      } catch (error) {
        fail(error);
      }
    });

  pki
    .command("user")
    .description("issue a client certificate (CN name, O role) and, with --context, a persysctl context using it")
    .argument("<name>", "user or tool name: 1-128 of A-Z a-z 0-9 . _ @ -")
    .requiredOption("--role <role>", `one of ${USER_ROLES.join(", ")}`)
    .option("--data-dir <dir>", "the control plane's data dir", DEFAULT_DATA_DIR)
    .option("--out <dir>", "folder for <name>.crt, <name>.key and ca.crt (default ~/.persys/certs/<context or name>)")
    .option("--context <name>", "save a persysctl context of this name in the client config")
    .option("--endpoint <url>", "the context's control plane endpoint", DEFAULT_ENDPOINT)
    .option("--config <path>", "client config file (default PERSYS_CONFIG or ~/.persys/config.yaml)")
    .addHelpText(
      "after",
      "\nExamples:\n  persys pki user alice --role admin --context local\n  persys pki user ci --role operator --out ./certs",
    )
    .action(
      async (
        name: string,
        o: { role: string; dataDir: string; out?: string; context?: string; endpoint: string; config?: string },
      ) => {
        try {
          if (!isUserRole(o.role)) {
            throw new PersysError("INVALID_ARGUMENT", `--role ${o.role}: use one of ${USER_ROLES.join(", ")}`);
          }
          const result = await issueUserFromDataDir({
            dataDir: o.dataDir,
            name,
            role: o.role,
            endpoint: o.endpoint,
            ...(o.out ? { out: o.out } : {}),
            ...(o.context ? { context: o.context } : {}),
            ...(o.config ? { configPath: o.config } : {}),
          });
          const lines = [
            `certificate: ${result.certPath} (CN=${name}, O=${o.role}, expires ${result.notAfter.toISOString()})`,
            `private key: ${result.keyPath} (mode 0600)`,
            `CA:          ${result.caPath}`,
          ];
          if (result.contextSaved)
            lines.push(
              `context "${result.contextSaved}" saved in ${result.configPath} (persysctl --context ${result.contextSaved} whoami)`,
            );
          console.log(lines.join("\n"));
        } catch (error) {
          fail(error);
        }
      },
    );
}
