/**
 * ECDSA P-256 keys for the PKI: generation, PKCS#8 PEM out, PEM in, and the one place that sets up
 * `@peculiar/x509` with Node's webcrypto. Every PKI module imports `x509` from here, never directly, so
 * the Reflect polyfill it needs is loaded first.
 */
import "reflect-metadata";
import { createPrivateKey, createPublicKey, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export type CryptoKey = webcrypto.CryptoKey;
export type CryptoKeyPair = webcrypto.CryptoKeyPair;

export { x509 };

/** The key and signature algorithm of every Persys key: ECDSA on P-256 with SHA-256. */
export const EC_ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/** Generates an extractable P-256 key pair. */
export async function generateKeyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC_ALGORITHM, true, ["sign", "verify"])) as CryptoKeyPair;
}

/** The private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form Node's `tls` and Vault use. */
export async function privateKeyToPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

/**
 * Imports a P-256 private key from PEM (PKCS#8 or SEC1 `EC PRIVATE KEY`) as a signing key. Throws (a
 * plain Error; callers wrap it) for another curve or algorithm.
 */
export async function importSigningKey(pem: string): Promise<CryptoKey> {
  const keyObject = createPrivateKey(pem);
  const details = keyObject.asymmetricKeyDetails;
  if (keyObject.asymmetricKeyType !== "ec" || details?.namedCurve !== "prime256v1") {
    throw new Error(`expected an ECDSA P-256 key, got ${keyObject.asymmetricKeyType} ${details?.namedCurve ?? ""}`);
  }
  const der = keyObject.export({ type: "pkcs8", format: "der" });
  return webcrypto.subtle.importKey("pkcs8", der, EC_ALGORITHM, false, ["sign"]) as Promise<CryptoKey>;
}

/** The public key (SPKI DER) belonging to a private key PEM. */
export function publicKeyDerOf(privateKeyPem: string): Buffer {
  return createPublicKey(privateKeyPem).export({ type: "spki", format: "der" });
}
