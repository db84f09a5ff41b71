/** Protobuf scalar types as named in the field table. */
export type ScalarType =
  | "string"
  | "bool"
  | "bytes"
  | "int32"
  | "sint32"
  | "sfixed32"
  | "uint32"
  | "fixed32"
  | "int64"
  | "sint64"
  | "sfixed64"
  | "uint64"
  | "fixed64"
  | "double"
  | "float";

/** One input field of a message, as the spec-file parser checks it. */
export interface FieldInfo {
  /** lowerCamelCase JSON name, the only spelling accepted in spec files. */
  readonly json: string;
  /** A scalar type, `enum`, `message` or `map`. */
  readonly type: string;
  /** Full name of the message or enum (for maps: of the value type). */
  readonly ref?: string;
  readonly repeated?: boolean;
  /** Name of the oneof group the field belongs to. */
  readonly oneof?: string;
  /** Maps: key and value types. */
  readonly key?: string;
  readonly value?: string;
}

/** The fields of one message, in declaration order. */
export type MessageFields = readonly FieldInfo[];
