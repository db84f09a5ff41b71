import { invalid } from "@persys/schema";

/**
 * Values in the state store are bytes. These helpers encode the two shapes the control plane stores:
 * JSON documents and plain text (UTF-8).
 */

/** The UTF-8 JSON text of `value`; INVALID_ARGUMENT for what JSON cannot represent (undefined, a function, a bigint). */
export function encodeJson(value: unknown): Uint8Array {
  return Buffer.from(jsonText(value), "utf8");
}

/** `value` as JSON text, with encodeJson's errors. */
export function jsonText(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw invalid("INVALID_ARGUMENT", [{ path: "value", reason: `cannot be encoded as JSON: ${String(error)}` }]);
  }
  if (text === undefined) {
    throw invalid("INVALID_ARGUMENT", [{ path: "value", reason: `cannot be encoded as JSON (${typeof value})` }]);
  }
  return text;
}

/**
 * The value parsed as UTF-8 JSON. The result is not checked against `T`: validate it where the shape
 * matters. Bytes that are not JSON: INVALID_ARGUMENT naming `value`.
 */
export function decodeJson<T = unknown>(bytes: Uint8Array): T {
  return parseJsonText<T>(decodeText(bytes));
}

/** JSON text parsed, with decodeJson's errors. */
export function parseJsonText<T = unknown>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw invalid("INVALID_ARGUMENT", [{ path: "value", reason: `is not JSON: ${(error as Error).message}` }]);
  }
}

/** The UTF-8 bytes of `text`. */
export function encodeText(text: string): Uint8Array {
  return Buffer.from(text, "utf8");
}

/** The bytes read as UTF-8 (invalid sequences become U+FFFD). */
export function decodeText(bytes: Uint8Array): string {
  return asBuffer(bytes).toString("utf8");
}

/** A `Buffer` over the same memory (no copy). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
