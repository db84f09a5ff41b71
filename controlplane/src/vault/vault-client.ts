/**
 * The control plane's Vault client (production mode), over `node-vault`: login by token or AppRole with
 * a self-renewal loop, certificates from Vault PKI, KV v2 as a secrets backend, and transit data keys
 * for envelope encryption.
 *
 * ```ts
 * const vault = await VaultClient.connect({
 *   endpoint: "https://vault.internal:8200",
 *   auth: { method: "approle", roleId, secretId },
 *   tls: { caPem },
 * });
 * const cert = await vault.issueCertificate("persys-server", { commonName: "control-plane", altNames: ["localhost"] });
 * await vault.putSecret("persys/db", { password: "..." });
 * const { plaintext, ciphertext } = await vault.generateDataKey("persys-secrets");
 * vault.close();
 * ```
 *
 * Every failure is a {@link VaultError} (see `vault-errors.ts` for the mapping). A call that fails
 * because the token expired or was revoked logs in again (AppRole) and is repeated once.
 */
import { X509Certificate as NodeX509Certificate } from "node:crypto";
import { invalid } from "@persys/schema";
import createVault from "node-vault";
import { type RotationClock, realClock } from "../pki/certificate-rotation.js";
import type { IssuedCertificate } from "../pki/cluster-ca.js";
import { VaultError, vaultError } from "./vault-errors.js";

export type VaultAuth =
  | { readonly method: "token"; readonly token: string }
  | {
      readonly method: "approle";
      readonly roleId: string;
      readonly secretId: string;
      /** The AppRole auth mount; default `approle`. */
      readonly mount?: string;
    };

export interface VaultClientOptions {
  /** e.g. `https://vault.internal:8200`. */
  readonly endpoint: string;
  readonly auth: VaultAuth;
  /** Vault Enterprise namespace. */
  readonly namespace?: string;
  /** CA to verify Vault's certificate with, and a client certificate if Vault asks for one. */
  readonly tls?: { readonly caPem?: string; readonly certPem?: string; readonly keyPem?: string };
  /** Secrets engine mounts; default `secret` (KV v2), `pki`, `transit`. */
  readonly mounts?: { readonly kv?: string; readonly pki?: string; readonly transit?: string };
  /** Renew the token when less than this fraction of its lease remains; default 1/3. */
  readonly renewBefore?: number;
  /** Deadline of one HTTP request; default 10 s. */
  readonly requestTimeoutMs?: number;
  /** First delay after a failed renewal or login, doubled up to `maxRetryDelayMs`; default 1 s. */
  readonly retryDelayMs?: number;
  /** Default 1 minute. */
  readonly maxRetryDelayMs?: number;
  /** Called for each failure of the background renewal (the loop goes on). */
  readonly onError?: (error: VaultError) => void;
  readonly clock?: RotationClock;
}

/** What `pki/issue/<role>` is asked for. */
export interface VaultCertificateRequest {
  readonly commonName: string;
  /** DNS subjectAltNames. */
  readonly altNames?: readonly string[];
  readonly ipSans?: readonly string[];
  /** Vault duration (`720h`) or seconds; the role's default when absent. */
  readonly ttl?: string | number;
}

/** A KV v2 secret's current version. */
export interface KvSecret {
  readonly data: Record<string, unknown>;
  readonly version: number;
  readonly createdTime: Date;
}

/** A transit data key: use `plaintext` now, store `ciphertext`, zero `plaintext` after use. */
export interface TransitDataKey {
  /** The 256-bit key. */
  readonly plaintext: Buffer;
  /** The key wrapped by transit, `vault:v<version>:...`. */
  readonly ciphertext: string;
  readonly keyVersion: number;
}

/** The token the client holds (never the token text). */
export interface VaultTokenInfo {
  readonly accessor?: string;
  readonly policies: readonly string[];
  readonly renewable: boolean;
  /** When the lease ends; absent for a token without TTL (e.g. root). */
  readonly expiresAt?: Date;
}

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Checks a path below a mount: segments of `A-Z a-z 0-9 . _ -`, no `.`/`..`, no empty segment. */
function checkPath(path: string, field: string): string {
  const ok =
    typeof path === "string" &&
    path.length > 0 &&
    path.length <= 512 &&
    path.split("/").every((s) => SEGMENT.test(s) && s !== "." && s !== "..");
  if (!ok)
    throw invalid("INVALID_ARGUMENT", [{ path: field, reason: "must be /-separated segments of A-Z a-z 0-9 . _ -" }]);
  return path;
}

function checkName(name: string, field: string): string {
  if (typeof name !== "string" || !SEGMENT.test(name) || name === "." || name === "..") {
    throw invalid("INVALID_ARGUMENT", [{ path: field, reason: "must be one segment of A-Z a-z 0-9 . _ -" }]);
  }
  return name;
}

interface AuthBlock {
  client_token?: string;
  accessor?: string;
  policies?: string[];
  token_policies?: string[];
  lease_duration?: number;
  renewable?: boolean;
}

/**
 * A logged-in Vault client. {@link VaultClient.connect} logs in and starts renewing; {@link close} stops.
 */
export class VaultClient {
  private readonly vault: createVault.client;
  private readonly clock: RotationClock;
  private readonly mounts: { kv: string; pki: string; transit: string };
  private readonly renewBefore: number;
  private info: VaultTokenInfo = { policies: [], renewable: false };
  /** When the current lease started and how long it is (ms). */
  private leaseStart = 0;
  private leaseMs = 0;
  /** The lease granted at login: renewals granting much less mean the token nears its max TTL. */
  private loginLeaseMs = 0;
  private timer: unknown;
  private retryDelayMs: number;
  private closed = false;
  private loggingIn: Promise<void> | undefined;

  private constructor(private readonly options: VaultClientOptions) {
    this.clock = options.clock ?? realClock;
    this.renewBefore = options.renewBefore ?? 1 / 3;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.mounts = {
      kv: checkPath(options.mounts?.kv ?? "secret", "mounts.kv"),
      pki: checkPath(options.mounts?.pki ?? "pki", "mounts.pki"),
      transit: checkPath(options.mounts?.transit ?? "transit", "mounts.transit"),
    };
    const tls = options.tls ?? {};
    this.vault = createVault({
      endpoint: options.endpoint,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.auth.method === "token" ? { token: options.auth.token } : {}),
      requestOptions: {
        timeout: options.requestTimeoutMs ?? 10_000,
        ...(tls.caPem ? { ca: tls.caPem } : {}),
        ...(tls.certPem ? { cert: tls.certPem } : {}),
        ...(tls.keyPem ? { key: tls.keyPem } : {}),
      },
    });
  }

  /**
   * Logs in (AppRole: `auth/<mount>/login`; token: `auth/token/lookup-self` to learn its lease) and
   * starts renewing the token before its lease ends. Rejects with a {@link VaultError} when Vault refuses
   * or cannot be reached (UNAVAILABLE, retryable).
   */
  static async connect(options: VaultClientOptions): Promise<VaultClient> {
    const renewBefore = options.renewBefore ?? 1 / 3;
    if (!(renewBefore > 0 && renewBefore < 1)) throw new RangeError("renewBefore must be between 0 and 1");
    const client = new VaultClient(options);
    await client.login();
    return client;
  }

  /** The token's accessor, policies and lease. */
  get token(): VaultTokenInfo {
    return this.info;
  }

  /**
   * Logs in again now (AppRole) or re-reads the token (token auth), and reschedules renewal. Concurrent
   * calls share one login.
   */
  login(): Promise<void> {
    this.loggingIn ??= this.doLogin().finally(() => {
      this.loggingIn = undefined;
    });
    return this.loggingIn;
  }

  private async doLogin(): Promise<void> {
    const auth = this.options.auth;
    if (auth.method === "approle") {
      const mount = checkPath(auth.mount ?? "approle", "auth.mount");
      const response = await this.send(`POST auth/${mount}/login`, () =>
        this.vault.approleLogin({ mount_point: mount, role_id: auth.roleId, secret_id: auth.secretId }),
      );
      const block = (response?.auth ?? {}) as AuthBlock;
      if (typeof block.client_token !== "string" || block.client_token === "") {
        throw new VaultError("INTERNAL", "Vault AppRole login answered without a client token", {
          operation: `POST auth/${mount}/login`,
        });
      }
      this.vault.token = block.client_token;
      this.adopt(block.lease_duration ?? 0, block.renewable === true, block);
      this.loginLeaseMs = this.leaseMs;
    } else {
      const response = await this.send("GET auth/token/lookup-self", () => this.vault.tokenLookupSelf());
      const data = (response?.data ?? {}) as {
        ttl?: number;
        renewable?: boolean;
        accessor?: string;
        policies?: string[];
      };
      this.adopt(data.ttl ?? 0, data.renewable === true, { accessor: data.accessor, policies: data.policies ?? [] });
      this.loginLeaseMs = this.leaseMs;
    }
    this.retryDelayMs = this.options.retryDelayMs ?? 1000;
    this.schedule();
  }

  /** Renews the token once (`auth/token/renew-self`) and reschedules. */
  async renewToken(): Promise<void> {
    const response = await this.send("POST auth/token/renew-self", () => this.vault.tokenRenewSelf());
    const block = (response?.auth ?? {}) as AuthBlock;
    this.adopt(block.lease_duration ?? 0, block.renewable === true, block);
    this.retryDelayMs = this.options.retryDelayMs ?? 1000;
    this.schedule();
  }

  private adopt(leaseSeconds: number, renewable: boolean, block: AuthBlock): void {
    const now = this.clock.now();
    this.leaseStart = now;
    this.leaseMs = Math.max(0, leaseSeconds) * 1000;
    const policies = block.token_policies ?? block.policies ?? this.info.policies;
    this.info = {
      ...(block.accessor ? { accessor: block.accessor } : this.info.accessor ? { accessor: this.info.accessor } : {}),
      policies,
      renewable,
      ...(this.leaseMs > 0 ? { expiresAt: new Date(now + this.leaseMs) } : {}),
    };
  }

  private schedule(delayMs?: number): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed || this.leaseMs === 0) return;
    const due = this.leaseStart + this.leaseMs * (1 - this.renewBefore);
    const wait = delayMs ?? due - this.clock.now();
    this.timer = this.clock.setTimeout(() => void this.refresh(due), Math.max(0, Math.min(wait, MAX_TIMER_MS)));
  }

  /** The background step: renew (or log in again) when due; on failure report, fall back, retry. */
  private async refresh(due: number): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    if (this.clock.now() < due) return this.schedule(); // a long wait done in steps
    const approle = this.options.auth.method === "approle";
    const nearMaxTtl = this.leaseMs < this.loginLeaseMs / 2;
    try {
      if (approle && (!this.info.renewable || nearMaxTtl)) await this.login();
      else if (this.info.renewable) await this.renewToken();
      else return; // a non-renewable token: nothing can extend it
    } catch (error) {
      const failure = error instanceof VaultError ? error : vaultError(error, "renew", this.options.endpoint);
      this.options.onError?.(failure);
      if (approle && (failure.code === "UNAUTHENTICATED" || failure.code === "PERMISSION_DENIED")) {
        try {
          await this.login();
          return;
        } catch (again) {
          this.options.onError?.(
            again instanceof VaultError ? again : vaultError(again, "login", this.options.endpoint),
          );
        }
      }
      if (this.closed) return;
      const delay = this.retryDelayMs;
      this.retryDelayMs = Math.min(delay * 2, this.options.maxRetryDelayMs ?? 60_000);
      this.schedule(delay);
    }
  }

  /** Runs one node-vault call, turning its failure into a {@link VaultError}. */
  private async send<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw vaultError(error, operation, this.options.endpoint);
    }
  }

  /**
   * Like `send`, but when the token turns out expired or revoked (UNAUTHENTICATED, or PERMISSION_DENIED
   * after the lease should have ended) logs in again with AppRole and repeats the call once.
   */
  private async request<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await this.send(operation, call);
    } catch (error) {
      const e = error as VaultError;
      const expired = this.info.expiresAt !== undefined && this.clock.now() >= this.info.expiresAt.getTime();
      const retry = e.code === "UNAUTHENTICATED" || (e.code === "PERMISSION_DENIED" && expired);
      if (!retry || this.options.auth.method !== "approle") throw error;
      await this.login();
      return this.send(operation, call);
    }
  }

  /**
   * Issues a certificate from `pki/issue/<role>` with a new key (PKCS#8 PEM). `caPem` is `ca_chain`
   * (issuer first) or `issuing_ca`; `notAfter` is Vault's `expiration`; `serial` lowercase hex.
   */
  async issueCertificate(role: string, request: VaultCertificateRequest): Promise<IssuedCertificate> {
    const operation = `POST ${this.mounts.pki}/issue/${checkName(role, "role")}`;
    const response = await this.request(operation, () =>
      this.vault.write(`${this.mounts.pki}/issue/${role}`, {
        common_name: request.commonName,
        ...(request.altNames?.length ? { alt_names: request.altNames.join(",") } : {}),
        ...(request.ipSans?.length ? { ip_sans: request.ipSans.join(",") } : {}),
        ...(request.ttl !== undefined ? { ttl: request.ttl } : {}),
        format: "pem",
        private_key_format: "pkcs8",
      }),
    );
    const data = (response?.data ?? {}) as {
      certificate?: string;
      private_key?: string;
      issuing_ca?: string;
      ca_chain?: string[];
      expiration?: number;
      serial_number?: string;
    };
    if (!data.certificate || !data.private_key || !(data.issuing_ca || data.ca_chain?.length)) {
      throw new VaultError("INTERNAL", `Vault ${operation} answered without certificate, key or CA`, { operation });
    }
    const cert = new NodeX509Certificate(data.certificate);
    const chain = data.ca_chain?.length ? data.ca_chain.join("\n") : data.issuing_ca!;
    return {
      certPem: data.certificate.endsWith("\n") ? data.certificate : `${data.certificate}\n`,
      keyPem: data.private_key.endsWith("\n") ? data.private_key : `${data.private_key}\n`,
      caPem: chain.endsWith("\n") ? chain : `${chain}\n`,
      notBefore: new Date(cert.validFrom),
      notAfter: typeof data.expiration === "number" ? new Date(data.expiration * 1000) : new Date(cert.validTo),
      serial: (data.serial_number ?? cert.serialNumber).replaceAll(":", "").toLowerCase(),
    };
  }

  /** The current version of a KV v2 secret, or `undefined` when there is none (or it was deleted). */
  async getSecret(path: string): Promise<KvSecret | undefined> {
    const full = `${this.mounts.kv}/data/${checkPath(path, "path")}`;
    let response: {
      data?: { data?: Record<string, unknown> | null; metadata?: { version?: number; created_time?: string } };
    };
    try {
      response = await this.request(`GET ${full}`, () => this.vault.read(full));
    } catch (error) {
      if ((error as VaultError).code === "NOT_FOUND") return undefined;
      throw error;
    }
    const data = response?.data?.data;
    if (!data) return undefined;
    const metadata = response.data?.metadata ?? {};
    return { data, version: metadata.version ?? 0, createdTime: new Date(metadata.created_time ?? 0) };
  }

  /**
   * Writes a new version of a KV v2 secret. With `cas`, only when the current version is `cas` (0: only
   * if absent); a mismatch is INVALID_ARGUMENT from Vault ("check-and-set parameter did not match").
   */
  async putSecret(
    path: string,
    data: Record<string, unknown>,
    options: { cas?: number } = {},
  ): Promise<{ version: number }> {
    const full = `${this.mounts.kv}/data/${checkPath(path, "path")}`;
    const response = await this.request(`POST ${full}`, () =>
      this.vault.write(full, { data, ...(options.cas !== undefined ? { options: { cas: options.cas } } : {}) }),
    );
    return { version: (response?.data as { version?: number } | undefined)?.version ?? 0 };
  }

  /** Deletes a KV v2 secret with every version and its metadata. Idempotent. */
  async deleteSecret(path: string): Promise<void> {
    const full = `${this.mounts.kv}/metadata/${checkPath(path, "path")}`;
    try {
      await this.request(`DELETE ${full}`, () => this.vault.delete(full));
    } catch (error) {
      if ((error as VaultError).code !== "NOT_FOUND") throw error;
    }
  }

  /** A new 256-bit data key from `transit/datakey/plaintext/<key>`. */
  async generateDataKey(keyName: string): Promise<TransitDataKey> {
    const full = `${this.mounts.transit}/datakey/plaintext/${checkName(keyName, "keyName")}`;
    const response = await this.request(`POST ${full}`, () => this.vault.write(full, { bits: 256 }));
    const data = (response?.data ?? {}) as { plaintext?: string; ciphertext?: string; key_version?: number };
    if (typeof data.plaintext !== "string" || typeof data.ciphertext !== "string") {
      throw new VaultError("INTERNAL", `Vault POST ${full} answered without plaintext and ciphertext`, {
        operation: `POST ${full}`,
      });
    }
    return {
      plaintext: Buffer.from(data.plaintext, "base64"),
      ciphertext: data.ciphertext,
      keyVersion: data.key_version ?? Number(/^vault:v(\d+):/.exec(data.ciphertext)?.[1] ?? 0),
    };
  }

  /** Unwraps a data key made by {@link generateDataKey} (`transit/decrypt/<key>`). */
  async decryptDataKey(keyName: string, ciphertext: string): Promise<Buffer> {
    const full = `${this.mounts.transit}/decrypt/${checkName(keyName, "keyName")}`;
    const response = await this.request(`POST ${full}`, () => this.vault.write(full, { ciphertext }));
    const plaintext = (response?.data as { plaintext?: string } | undefined)?.plaintext;
    if (typeof plaintext !== "string") {
      throw new VaultError("INTERNAL", `Vault POST ${full} answered without plaintext`, { operation: `POST ${full}` });
    }
    return Buffer.from(plaintext, "base64");
  }

  /** Stops renewing (the token then expires on its own). Idempotent. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
