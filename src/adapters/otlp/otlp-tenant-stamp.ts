import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { ReflectorError } from "../../domain/errors.js";
import { resourceTenant } from "../../domain/otlp/map-trace.js";
import { parseOtlpTraceRequest } from "../../domain/otlp/otlp-span.js";
import { createOtlpDecoder, detectEncoding, type OtlpEncoding } from "./otlp-decoder.js";
import { appendResourceAttribute } from "./protobuf-resource-stamp.js";

const protoRoot = fileURLToPath(new URL("../../../proto/", import.meta.url));

export type StampedRequest =
  | {
      ok: true;
      /**
       * The request with every resource naming the tenant, in the encoding it came in: one record,
       * or several of its spans each when one would be over `maxRecordBytes`.
       */
      values: Buffer[];
      spans: number;
      /** The trace id of the request's first span (a record key that spreads traces over partitions). */
      firstTraceId: string | null;
      /** The request's distinct trace ids (what the tenant's new-trace limit counts). */
      traceIds: string[];
    }
  | { ok: false; otherTenant: string }
  | { ok: false; spanBytes: number }
  /** The request holds more spans than one may (`maxSpans`): refused before it is re-encoded. */
  | { ok: false; tooManySpans: number };

export interface OtlpTenantStamper {
  /**
   * Validates one `ExportTraceServiceRequest` (throws DECODE_FAILED or SCHEMA_INVALID with the
   * reason) and sets the tenant attribute of every resource to `tenantId`. A resource that already
   * names another tenant is refused (`ok: false`), never re-labelled.
   */
  stamp(
    body: Buffer,
    encoding: OtlpEncoding,
    tenantId: string,
    maxRecordBytes: number,
    maxSpans?: number,
  ): StampedRequest;
}

interface KeyValue {
  key?: unknown;
}
interface ScopeSpansObject {
  spans?: unknown[] | null;
}
interface ResourceSpansObject {
  resource?: { attributes?: KeyValue[] | null } | null;
  scopeSpans?: ScopeSpansObject[] | null;
}
interface RequestObject {
  resourceSpans?: ResourceSpansObject[] | null;
}

/**
 * The request cut into requests of at most `budget` bytes each (`sizeOf` measures one), spans in
 * their order under their own resource and scope. The bridge files spans by trace, so a trace's
 * spans may travel in several records. A lone span over the budget is reported by its size.
 */
export function splitRequest(
  request: RequestObject,
  sizeOf: (part: RequestObject) => number,
  budget: number,
): RequestObject[] | { spanBytes: number } {
  if (sizeOf(request) <= budget) return [request];
  const parts: RequestObject[] = [];
  let current: ResourceSpansObject[] = [];
  let bytes = 0;
  for (const rs of request.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        const alone = sizeOf({ resourceSpans: [{ ...rs, scopeSpans: [{ ...ss, spans: [span] }] }] });
        if (alone > budget) return { spanBytes: alone };
        if (bytes + alone > budget && bytes > 0) {
          parts.push({ resourceSpans: current });
          current = [];
          bytes = 0;
        }
        let lastRs = current.at(-1);
        if (lastRs === undefined || lastRs.resource !== rs.resource) {
          lastRs = { ...rs, scopeSpans: [] };
          current.push(lastRs);
        }
        const scopes = (lastRs.scopeSpans ??= []);
        let lastSs = scopes.at(-1);
        if (
          lastSs === undefined ||
          (lastSs as { scope?: unknown }).scope !== (ss as { scope?: unknown }).scope
        ) {
          lastSs = { ...ss, spans: [] };
          scopes.push(lastSs);
        }
        (lastSs.spans ??= []).push(span);
        bytes += alone;
      }
    }
  }
  if (bytes > 0) parts.push({ resourceSpans: current });
  return parts;
}

/**
 * What OTLP/HTTP hands the bridge: the request as the exporter sent it, its tenant written into
 * its resources from the API key (so the bridge, which reads the tenant from the resource, files
 * it under the key's tenant). Both encodings are parsed by the OpenTelemetry `.proto` definitions
 * and validated by the same rules the Kafka path applies.
 */
export function createOtlpTenantStamper(options: {
  tenantAttribute: string;
  projectAttribute: string;
}): OtlpTenantStamper {
  const uniqueKeys = [options.tenantAttribute, options.projectAttribute];
  const decoder = createOtlpDecoder({ uniqueResourceKeys: uniqueKeys });
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => protoRoot + target;
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false });
  const requestType = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
  const resourceType = root.lookupType("opentelemetry.proto.resource.v1.Resource");
  const tenantKeyBytes = Buffer.from(options.tenantAttribute, "utf8");
  const tenantField = (tenantId: string) =>
    Buffer.from(resourceType.encode({ attributes: [tenantEntry(tenantId)] }).finish());

  const tenantEntry = (tenantId: string) => ({
    key: options.tenantAttribute,
    value: { stringValue: tenantId },
  });
  /** Every resource names the tenant once: its own entry for the attribute (if any) replaced. */
  function stampAll(resourceSpans: ResourceSpansObject[] | null | undefined, tenantId: string): void {
    for (const rs of resourceSpans ?? []) {
      rs.resource ??= { attributes: [] };
      const kept = (rs.resource.attributes ?? []).filter((kv) => kv.key !== options.tenantAttribute);
      kept.push(tenantEntry(tenantId));
      rs.resource.attributes = kept;
    }
  }

  function jsonOf(body: Buffer): unknown {
    try {
      return JSON.parse(body.toString("utf8")) as unknown;
    } catch (err) {
      throw new ReflectorError(
        "DECODE_FAILED",
        `OTLP/JSON body is not valid JSON: ${(err as Error).message}`,
      );
    }
  }
  /** The spans of an OTLP/JSON request, by the rules the Kafka path's decoder applies. */
  function validated(raw: unknown) {
    const parsed = parseOtlpTraceRequest(raw, { uniqueResourceKeys: uniqueKeys });
    if (!parsed.ok) {
      throw new ReflectorError("SCHEMA_INVALID", `not a valid OTLP trace export (json): ${parsed.reason}`);
    }
    return parsed.spans;
  }
  function jsonRequest(raw: unknown) {
    const object = raw as RequestObject;
    return { object, encode: (part: RequestObject) => Buffer.from(JSON.stringify(part), "utf8") };
  }
  function protobufRequest(body: Buffer) {
    const object = requestType.decode(body) as unknown as RequestObject;
    return {
      object,
      encode: (part: RequestObject) =>
        // protobufjs encodes plain objects of the message's shape (parts of a decoded message here).
        // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- see above
        Buffer.from(requestType.encode(part as protobuf.Message).finish()),
    };
  }

  function stamp(
    body: Buffer,
    encoding: OtlpEncoding,
    tenantId: string,
    maxRecordBytes: number,
    maxSpans: number,
  ): StampedRequest {
    if (body.length > 0 && detectEncoding(body) !== encoding) {
      throw new ReflectorError(
        "DECODE_FAILED",
        encoding === "json"
          ? "the body is not OTLP/JSON (content-type application/json): it does not open with `{`"
          : "the body is JSON, sent as application/x-protobuf: send it as application/json",
      );
    }
    if (body.length === 0 && encoding === "json") {
      throw new ReflectorError("DECODE_FAILED", "the body is empty: OTLP/JSON is an object");
    }
    const raw = encoding === "json" ? jsonOf(body) : null;
    const spans = raw === null ? decoder.decode(body).spans : validated(raw);
    if (spans.length > maxSpans) return { ok: false, tooManySpans: spans.length };
    for (const span of spans) {
      const named = resourceTenant(span.resource, { ...options, defaultTenant: tenantId });
      if (named !== tenantId) return { ok: false, otherTenant: named };
    }
    const firstTraceId = spans[0]?.traceId ?? null;
    const traceIds = [...new Set(spans.map((span) => span.traceId))];
    // Protobuf whose resources do not name a tenant (the usual request): stamped in its bytes.
    if (raw === null && !body.includes(tenantKeyBytes)) {
      const value = appendResourceAttribute(body, tenantField(tenantId));
      if (value.length <= maxRecordBytes)
        return { ok: true, values: [value], spans: spans.length, firstTraceId, traceIds };
    }
    const { object, encode } = raw !== null ? jsonRequest(raw) : protobufRequest(body);
    stampAll(object.resourceSpans, tenantId);
    const parts = splitRequest(object, (part) => encode(part).length, maxRecordBytes);
    if (!Array.isArray(parts)) return { ok: false, spanBytes: parts.spanBytes };
    return { ok: true, values: parts.map(encode), spans: spans.length, firstTraceId, traceIds };
  }

  return {
    stamp(body, encoding, tenantId, maxRecordBytes, maxSpans = Number.POSITIVE_INFINITY) {
      try {
        return stamp(body, encoding, tenantId, maxRecordBytes, maxSpans);
      } catch (err) {
        // Nesting deeper than a parser's stack (JSON arrays in arrays, protobuf values in values)
        // is a body that is not an OTLP export, not a server error.
        if (err instanceof RangeError) {
          throw new ReflectorError("DECODE_FAILED", "the body nests deeper than an OTLP export may", {
            cause: err,
          });
        }
        throw err;
      }
    },
  };
}
