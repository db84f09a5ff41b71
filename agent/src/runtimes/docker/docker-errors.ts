import { PersysError } from "@persys/schema";

/** The Docker operation that failed; it decides how an error text is read. */
export type DockerOperation = "pull" | "create" | "start" | "stop" | "remove" | "inspect" | "list" | "other";

/** The parts of a docker-modem error (or a socket error) we read. */
interface DockerLikeError {
  readonly statusCode?: number;
  readonly code?: string;
  readonly json?: { message?: string } | null;
  readonly reason?: string;
  readonly message?: string;
}

const unreachableCodes = new Set([
  "ENOENT",
  "ECONNREFUSED",
  "EACCES",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
]);

/** The daemon's own text of an error (the JSON `message`), else the error's message. */
export function dockerErrorText(error: unknown): string {
  const e = (error ?? {}) as DockerLikeError;
  const fromJson = typeof e.json === "object" && e.json !== null ? e.json.message : undefined;
  const text = fromJson || e.message || String(error);
  return text.replace(/^\(HTTP code \d+\) [a-z ]+ - /, "").trim();
}

/** Whether the error means the daemon could not be reached at all (socket missing, refused, reset). */
export function isDaemonUnreachable(error: unknown): boolean {
  const e = (error ?? {}) as DockerLikeError;
  if (e.code && unreachableCodes.has(e.code)) return true;
  return /socket hang up|connect ENOENT|connect ECONNREFUSED|Cannot connect to the Docker daemon/i.test(
    e.message ?? "",
  );
}

/** Whether the error is Docker's 404 for a container, image or volume that does not exist. */
export function isNotFound(error: unknown): boolean {
  return (error as DockerLikeError | undefined)?.statusCode === 404;
}

/** Whether the error is Docker's 409 (name in use, removal already in progress, ...). */
export function isConflict(error: unknown): boolean {
  return (error as DockerLikeError | undefined)?.statusCode === 409;
}

const imageUnknown =
  /manifest unknown|manifest for .* not found|not found: manifest|repository .* not found|does not exist|pull access denied|no such host|name unknown|No such image/i;
const portInUse = /port is already allocated|address already in use|bind: .*in use/i;
const badMount = /bind source path does not exist|invalid mount config|invalid volume specification|not a directory/i;
const noSpace = /no space left on device/i;
const badExec =
  /executable file not found|exec format error|no such file or directory: unknown|permission denied: unknown/i;

/** The host port named in a Docker port-conflict text ("0.0.0.0:8080"), when there is one. */
function conflictingPort(text: string): string | undefined {
  return /(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]):(\d{1,5})/i.exec(text)?.[0] ?? /:(\d{1,5})\b/.exec(text)?.[1];
}

/**
 * Turns a Docker Engine error into a typed PersysError whose message keeps the daemon's (or the
 * registry's) own text:
 * - daemon unreachable → RUNTIME_UNAVAILABLE (retryable);
 * - pull: the registry does not know the image, or no registry resolves for it (DNS "no such host")
 *   → IMAGE_NOT_FOUND (not retryable: the image is not on the node and nothing can provide it);
 *   any other registry failure (refused, timeout, 5xx, auth) → IMAGE_PULL_FAILED (retryable);
 * - a host port held by another process or container → PORT_CONFLICT (not retryable);
 * - a missing bind source or bad mount → INVALID_SPEC; an entrypoint that cannot run → RUNTIME_ERROR
 *   (not retryable); a full disk → RUNTIME_UNAVAILABLE (retryable);
 * - anything else → RUNTIME_ERROR (retryable).
 */
export function classifyDockerError(
  error: unknown,
  operation: DockerOperation,
  context: { readonly image?: string; readonly socket?: string } = {},
): PersysError {
  if (error instanceof PersysError) return error;
  const text = dockerErrorText(error);
  if (isDaemonUnreachable(error)) {
    return new PersysError(
      "RUNTIME_UNAVAILABLE",
      `Docker${context.socket ? ` at ${context.socket}` : ""} does not answer: ${text}`,
      { cause: error, retryable: true },
    );
  }
  if (noSpace.test(text)) {
    return new PersysError("RUNTIME_UNAVAILABLE", `the node's disk is full: ${text}`, {
      cause: error,
      retryable: true,
    });
  }
  const image = context.image ?? "the image";
  if (operation === "pull") {
    if (imageUnknown.test(text)) {
      return new PersysError("IMAGE_NOT_FOUND", `image ${image} is not on this node and no registry has it: ${text}`, {
        cause: error,
        retryable: false,
      });
    }
    return new PersysError("IMAGE_PULL_FAILED", `pulling image ${image} failed: ${text}`, {
      cause: error,
      retryable: true,
    });
  }
  if (portInUse.test(text)) {
    const port = conflictingPort(text);
    return new PersysError(
      "PORT_CONFLICT",
      `host port ${port ?? ""} is already in use on this node: ${text}`.replace("port  is", "port is"),
      { cause: error, retryable: false },
    );
  }
  if (/No such image/i.test(text)) {
    return new PersysError("IMAGE_NOT_FOUND", `image ${image} is not on this node: ${text}`, {
      cause: error,
      retryable: false,
    });
  }
  if (badMount.test(text)) {
    return new PersysError("INVALID_SPEC", `a volume of the container cannot be mounted: ${text}`, {
      cause: error,
      retryable: false,
    });
  }
  if (badExec.test(text)) {
    return new PersysError("RUNTIME_ERROR", `the container's command cannot run: ${text}`, {
      cause: error,
      retryable: false,
    });
  }
  return new PersysError("RUNTIME_ERROR", `Docker ${operation} failed: ${text}`, { cause: error, retryable: true });
}
