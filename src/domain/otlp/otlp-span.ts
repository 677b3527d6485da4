import { z } from "zod";
import { describeIssues } from "../contracts/parse-contract.js";

/**
 * One span as the OTLP bridge keeps it: the fields of an OTLP span that the mapping reads, with
 * attributes flattened to plain values and the resource's attributes carried along (a record
 * holds spans of many resources). Both encodings of an `ExportTraceServiceRequest` (OTLP/JSON and
 * protobuf, decoded to the same JSON shape) become this.
 */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | Attributes;
export interface Attributes {
  [key: string]: AttributeValue;
}

export interface OtlpSpanEvent {
  name: string;
  timeUnixNano: string;
  attributes: Attributes;
}

export interface OtlpSpan {
  /** 32 lower-case hex digits. */
  traceId: string;
  /** 16 lower-case hex digits. */
  spanId: string;
  parentSpanId: string | null;
  /** Whether the parent is in another process (span flags bits 8 and 9); null when the exporter does not say. */
  parentIsRemote: boolean | null;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attributes;
  events: OtlpSpanEvent[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: 0 | 1 | 2; message: string };
  resource: Attributes;
}

/** Attribute values nest (arrays, key-value lists); deeper than this they are kept as a marker. */
const maxValueDepth = 8;
/** Nanoseconds since the epoch that a JavaScript Date can still show (year 275760). */
const maxUnixNano = 8_640_000_000_000_000_000_000n;

const hex = (digits: number) =>
  z
    .string()
    .regex(new RegExp(`^[0-9a-fA-F]{${String(digits)}}$`), `must be ${String(digits)} hex digits`)
    .transform((id) => id.toLowerCase())
    .refine((id) => /[1-9a-f]/.test(id), "must not be all zeros");

const unixNano = z
  .union([z.string().regex(/^\d{1,22}$/, "must be a decimal count of nanoseconds"), z.number().int().min(0)])
  .transform((value) => BigInt(value))
  .refine((value) => value < maxUnixNano, "is beyond the dates this build can show")
  .transform((value) => value.toString());

/**
 * Attribute lists are read by `flatten` below, not by a zod schema: they are most of a record's
 * bytes, a recursive schema over them cost more than the rest of the decoding, and an odd value
 * (a producer's own shape) is kept as null rather than refusing the record.
 */
const attributeList = z.array(z.unknown()).optional();

/** protojson may write enums by name; OTLP/JSON says numbers. Both are read. */
const statusCode = z
  .union([
    z.literal(0),
    z.literal(1),
    z.literal(2),
    z.enum(["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"]),
  ])
  .transform((code) =>
    typeof code === "number" ? code : code === "STATUS_CODE_ERROR" ? 2 : code === "STATUS_CODE_OK" ? 1 : 0,
  );

const spanSchema = z.object({
  traceId: hex(32),
  spanId: hex(16),
  parentSpanId: z.union([z.literal(""), hex(16)]).optional(),
  flags: z.number().int().min(0).optional(),
  name: z.string().max(10_000).default(""),
  startTimeUnixNano: unixNano,
  endTimeUnixNano: unixNano,
  attributes: attributeList,
  events: z
    .array(z.object({ name: z.string().default(""), timeUnixNano: unixNano, attributes: attributeList }))
    .optional(),
  status: z.object({ code: statusCode.optional(), message: z.string().optional() }).optional(),
});

/** The JSON shape of an OTLP `ExportTraceServiceRequest` (OTLP/JSON, lowerCamelCase, hex ids). */
export const OtlpTraceRequest = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z.object({ attributes: attributeList }).optional(),
        scopeSpans: z.array(z.object({ spans: z.array(spanSchema).optional() })).optional(),
      }),
    )
    .optional(),
});

/** Text Postgres can store in jsonb: no NUL, no lone surrogate (both become U+FFFD). */
function storable(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD").toWellFormed();
}

function plainValue(value: unknown, depth: number): AttributeValue {
  if (typeof value !== "object" || value === null) return null;
  if (depth > maxValueDepth) return "[nested too deep]";
  const v = value as Record<string, unknown>;
  if (typeof v.stringValue === "string") return storable(v.stringValue);
  if (typeof v.boolValue === "boolean") return v.boolValue;
  if (typeof v.intValue === "string" || typeof v.intValue === "number") {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : storable(String(v.intValue));
  }
  if (typeof v.doubleValue === "string" || typeof v.doubleValue === "number") {
    const n = Number(v.doubleValue);
    return Number.isFinite(n) ? n : storable(String(v.doubleValue));
  }
  if (typeof v.bytesValue === "string") return storable(v.bytesValue);
  if (typeof v.arrayValue === "object" && v.arrayValue !== null) {
    const values = (v.arrayValue as { values?: unknown }).values;
    return Array.isArray(values) ? values.map((item) => plainValue(item, depth + 1)) : [];
  }
  if (typeof v.kvlistValue === "object" && v.kvlistValue !== null) {
    return flatten((v.kvlistValue as { values?: unknown }).values, depth + 1);
  }
  return null;
}

/**
 * An OTLP `KeyValue` list as an object without a prototype: a key named `__proto__` is an
 * ordinary key here, never the object's prototype (through which a producer could otherwise
 * make any attribute, the tenant's too, seem present). Entries without a string key are skipped;
 * a key given twice keeps its last value and is reported to `repeated`.
 */
function flatten(list: unknown, depth = 0, repeated?: (key: string) => void): Attributes {
  const out = Object.create(null) as Attributes;
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    if (typeof item !== "object" || item === null) continue;
    const { key, value } = item as { key?: unknown; value?: unknown };
    if (typeof key !== "string") continue;
    const name = storable(key);
    if (repeated && Object.hasOwn(out, name)) repeated(name);
    out[name] = plainValue(value, depth);
  }
  return out;
}

/** Span flags: bit 8 says whether bit 9 (the parent is remote) is known. */
const hasIsRemoteMask = 0x100;
const isRemoteMask = 0x200;

export type OtlpParseResult = { ok: true; spans: OtlpSpan[] } | { ok: false; reason: string };

/**
 * The spans of one `ExportTraceServiceRequest` in its JSON shape, or why it is not one (the first
 * ten problems, with their paths). A record either passes whole or goes to the dead-letter topic
 * whole, so nothing of it is silently dropped.
 */
export function parseOtlpTraceRequest(
  raw: unknown,
  options: {
    /**
     * Resource attributes that must be given once (the tenant's and the project's): a resource
     * that names two tenants gets the whole record refused, not one of them picked.
     */
    uniqueResourceKeys?: readonly string[];
  } = {},
): OtlpParseResult {
  const parsed = OtlpTraceRequest.safeParse(raw);
  if (!parsed.success) {
    const reason = describeIssues(parsed.error);
    return { ok: false, reason };
  }
  const spans: OtlpSpan[] = [];
  const unique = new Set(options.uniqueResourceKeys ?? []);
  const repeated: string[] = [];
  for (const [r, resourceSpans] of (parsed.data.resourceSpans ?? []).entries()) {
    const resource = flatten(resourceSpans.resource?.attributes, 0, (key) => {
      if (unique.has(key))
        repeated.push(`resourceSpans.${String(r)}.resource.attributes: ${key} is given more than once`);
    });
    if (repeated.length > 0) return { ok: false, reason: repeated.slice(0, 10).join("; ") };
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        const flags = span.flags ?? 0;
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId:
            span.parentSpanId === undefined || span.parentSpanId === "" ? null : span.parentSpanId,
          parentIsRemote: flags & hasIsRemoteMask ? (flags & isRemoteMask) !== 0 : null,
          name: storable(span.name),
          startTimeUnixNano: span.startTimeUnixNano,
          endTimeUnixNano: span.endTimeUnixNano,
          attributes: flatten(span.attributes),
          events: (span.events ?? []).map((event) => ({
            name: storable(event.name),
            timeUnixNano: event.timeUnixNano,
            attributes: flatten(event.attributes),
          })),
          status: {
            code: span.status?.code ?? 0,
            message: storable(span.status?.message ?? ""),
          },
          resource,
        });
      }
    }
  }
  return { ok: true, spans };
}
