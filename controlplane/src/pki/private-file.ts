/**
 * Files holding keys and certificates: written atomically (temporary file in the same folder, fsync,
 * rename, fsync of the folder) with an exact mode, and key files checked for loose permissions.
 */
import { randomBytes } from "node:crypto";
import { chmod, link, open, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { PkiError } from "./pki-error.js";

/** Mode of private key files. */
export const KEY_FILE_MODE = 0o600;
/** Mode of certificate files. */
export const CERT_FILE_MODE = 0o644;
/** Mode of folders holding keys. */
export const KEY_DIR_MODE = 0o700;

async function writeTemporary(path: string, data: string | Uint8Array, mode: number): Promise<string> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(tmp, "wx", mode);
  try {
    await handle.writeFile(data);
    // The umask may have removed bits from `mode` at creation; set it exactly.
    await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(tmp).catch(() => {});
    throw error;
  }
  await handle.close();
  return tmp;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `data` atomically: a reader sees the old or the new content, never a part, and the
 * file never exists with a looser mode than `mode`. Durable when it resolves.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  const tmp = await writeTemporary(path, data, mode);
  try {
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => {});
    throw error;
  }
  await syncDirectory(dirname(path));
}

/**
 * Creates `path` with `data` unless it exists (then nothing is written and it resolves `false`). Atomic
 * like {@link writeFileAtomic}; of two concurrent creators exactly one wins.
 */
export async function createFileExclusive(path: string, data: string | Uint8Array, mode: number): Promise<boolean> {
  const tmp = await writeTemporary(path, data, mode);
  try {
    await link(tmp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(tmp).catch(() => {});
  }
  await syncDirectory(dirname(path));
  return true;
}

/** Throws a {@link PkiError} `key-permissions` when group or others have any access to the key file. */
export async function assertPrivateKeyFile(path: string): Promise<void> {
  const info = await stat(path);
  const loose = info.mode & 0o077;
  if (loose !== 0) {
    const mode = (info.mode & 0o777).toString(8).padStart(4, "0");
    throw new PkiError(
      "key-permissions",
      path,
      `private key ${path} has mode ${mode}, readable or writable by others: run chmod 600 ${path}`,
    );
  }
}

/** Whether a path exists (any file type). */
export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
}

/** Sets the folder's mode (used for a folder the PKI created). */
export async function restrictDirectory(dir: string): Promise<void> {
  await chmod(dir, KEY_DIR_MODE);
}
