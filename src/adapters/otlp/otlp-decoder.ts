import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { ReflectorError } from "../../domain/errors.js";
import { parseOtlpTraceRequest, type OtlpSpan } from "../../domain/otlp/otlp-span.js";

/** The OTLP `.proto` files (proto/README.md), at the package root in src/ and dist/ alike. */
const protoRoot = fileURLToPath(new URL("../../../proto/", import.meta.url));

export type OtlpEncoding = "json" | "protobuf";

/**
 * A record's encoding: OTLP/JSON is a JSON object, so its first byte that is not white space (or a
 * UTF-8 byte-order mark) is `{`; an `ExportTraceServiceRequest` in protobuf starts with the tag of
 * field 1 (0x0a), or is empty. No other byte can open either.
 */
export function detectEncoding(value: Buffer): OtlpEncoding {
  let i = 0;
  if (value[0] === 0xef && value[1] === 0xbb && value[2] === 0xbf) i = 3;
  while (
    i < value.length &&
    (value[i] === 0x20 || value[i] === 0x0a || value[i] === 0x0d || value[i] === 0x09)
  )
    i += 1;
  // 0x0a is both a newline and protobuf's field-1 tag: a JSON record is the one that reaches `{`.
  return value[i] === 0x7b ? "json" : "protobuf";
}

export interface OtlpDecoder {
  /** The spans of one record; throws DECODE_FAILED or SCHEMA_INVALID with the reason. */
  decode(value: Buffer): { encoding: OtlpEncoding; spans: OtlpSpan[] };
}

/** Protobuf `bytes` ids are base64 after toObject; OTLP/JSON (and the mapping) use hex. */
function hexId(value: unknown): unknown {
  return typeof value === "string" ? Buffer.from(value, "base64").toString("hex") : value;
}

interface SpanObject {
  traceId?: unknown;
  spanId?: unknown;
  parentSpanId?: unknown;
  links?: { traceId?: unknown; spanId?: unknown }[];
}

/**
 * Decodes OTLP trace records in both encodings with the OpenTelemetry protocol definitions
 * (protobufjs reads the `.proto` files; no protobuf parsing is written here) and validates them
 * with the domain's OTLP/JSON schema, so both encodings pass one set of rules.
 */
export function createOtlpDecoder(options: { uniqueResourceKeys?: readonly string[] } = {}): OtlpDecoder {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => protoRoot + target;
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false });
  const requestType = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");

  function fromProtobuf(value: Buffer): unknown {
    let message: protobuf.Message;
    try {
      message = requestType.decode(value);
    } catch (err) {
      throw new ReflectorError(
        "DECODE_FAILED",
        `not an OTLP ExportTraceServiceRequest in protobuf or JSON: ${(err as Error).message}`,
      );
    }
    // The JSON shape of OTLP/JSON: 64-bit numbers as decimal strings, enums as numbers.
    const object = requestType.toObject(message, { longs: String, enums: Number, bytes: String });
    const request = object as { resourceSpans?: { scopeSpans?: { spans?: SpanObject[] }[] }[] };
    // Bytes that are neither JSON nor OTLP can still decode as a message of unknown fields only.
    if (value.length > 0 && (request.resourceSpans ?? []).length === 0) {
      throw new ReflectorError(
        "DECODE_FAILED",
        "not an OTLP ExportTraceServiceRequest in protobuf or JSON: no resourceSpans in a non-empty record",
      );
    }
    for (const resourceSpans of request.resourceSpans ?? []) {
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          span.traceId = hexId(span.traceId);
          span.spanId = hexId(span.spanId);
          span.parentSpanId = hexId(span.parentSpanId);
        }
      }
    }
    return object;
  }

  function fromJson(value: Buffer): unknown {
    try {
      return JSON.parse(value.toString("utf8")) as unknown;
    } catch (err) {
      throw new ReflectorError(
        "DECODE_FAILED",
        `OTLP/JSON record is not valid JSON: ${(err as Error).message}`,
      );
    }
  }

  return {
    decode(value) {
      const encoding = detectEncoding(value);
      const raw = encoding === "json" ? fromJson(value) : fromProtobuf(value);
      const parsed = parseOtlpTraceRequest(raw, options);
      if (!parsed.ok) {
        throw new ReflectorError(
          "SCHEMA_INVALID",
          `not a valid OTLP trace export (${encoding}): ${parsed.reason}`,
        );
      }
      return { encoding, spans: parsed.spans };
    },
  };
}
