import { createHash, X509Certificate } from "node:crypto";

/** How a CA public key pin is written: `sha256:` and 64 lowercase hex digits. */
export const CA_PIN_PATTERN = /^sha256:[0-9a-f]{64}$/;

/**
 * The pin of a CA certificate: `sha256:<hex>` of its SubjectPublicKeyInfo (DER), the form of
 * kubeadm's `--discovery-token-ca-cert-hash`. It names the CA's key, so a re-issued CA certificate
 * with the same key keeps its pin.
 *
 * @throws Error when `caPem` is not a PEM certificate.
 */
export function caPublicKeyPin(caPem: string): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: "spki", format: "der" });
  return `sha256:${createHash("sha256").update(spki).digest("hex")}`;
}
