import protobuf from "protobufjs";

/**
 * Appends one encoded `KeyValue` field to the `Resource` of every `ResourceSpans` of an encoded
 * `ExportTraceServiceRequest`, without decoding the spans: a repeated field's elements may come
 * anywhere in a message, so the resource gains one attribute and every other byte is kept as
 * sent. What it costs is a copy of the body, against a decode and an encode of every span.
 *
 * `attributeField` is the attribute as a `Resource` writes it (field 1, length-delimited:
 * `Resource.encode({ attributes: [kv] })`). A `ResourceSpans` without a resource gets one.
 */
export function appendResourceAttribute(body: Buffer, attributeField: Buffer): Buffer {
  const out: Buffer[] = [];
  forEachField(body, (field, tag, content) => {
    if (tag !== lengthDelimited(1) || content === null) {
      out.push(field);
      return;
    }
    const resourceSpans = stampResourceSpans(content, attributeField);
    out.push(varint(tag), varint(resourceSpans.length), resourceSpans);
  });
  return Buffer.concat(out);
}

/** A `ResourceSpans` (its content bytes) whose resource (field 1) holds the attribute too. */
function stampResourceSpans(content: Buffer, attributeField: Buffer): Buffer {
  const fields: { field: Buffer; tag: number; content: Buffer | null }[] = [];
  forEachField(content, (field, tag, inner) => fields.push({ field, tag, content: inner }));
  // A resource given twice: the decoder (protobufjs) keeps the last one, so that one is stamped.
  const last = fields.findLastIndex((f) => f.tag === lengthDelimited(1) && f.content !== null);
  const out = fields.map((f, i) => {
    if (i !== last || f.content === null) return f.field;
    return Buffer.concat([
      varint(f.tag),
      varint(f.content.length + attributeField.length),
      f.content,
      attributeField,
    ]);
  });
  if (last === -1) out.push(varint(lengthDelimited(1)), varint(attributeField.length), attributeField);
  return Buffer.concat(out);
}

function lengthDelimited(field: number): number {
  return (field << 3) | 2;
}

/**
 * Calls `visit` with each top-level field of a message: its bytes as sent (tag included), its tag
 * and, for a length-delimited field, its content. Throws on bytes that are not a message (the
 * caller decoded them successfully first, so this does not happen).
 */
function forEachField(message: Buffer, visit: (field: Buffer, tag: number, content: Buffer | null) => void) {
  const reader = protobuf.Reader.create(message);
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    if ((tag & 7) === 2) {
      const length = reader.uint32();
      const contentStart = reader.pos;
      reader.skip(length);
      visit(message.subarray(start, reader.pos), tag, message.subarray(contentStart, reader.pos));
    } else {
      reader.skipType(tag & 7);
      visit(message.subarray(start, reader.pos), tag, null);
    }
  }
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value >>> 0;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  bytes.push(v);
  return Buffer.from(bytes);
}
