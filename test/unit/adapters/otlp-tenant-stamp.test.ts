import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { createOtlpDecoder } from "../../../src/adapters/otlp/otlp-decoder.js";
import { createOtlpTenantStamper, splitRequest } from "../../../src/adapters/otlp/otlp-tenant-stamp.js";
import { appendResourceAttribute } from "../../../src/adapters/otlp/protobuf-resource-stamp.js";

/** The tenant stamp of OTLP/HTTP requests, in the bytes of protobuf and in OTLP/JSON. */
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => fileURLToPath(new URL(`../../../proto/${target}`, import.meta.url));
root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto");
const Request = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const Resource = root.lookupType("opentelemetry.proto.resource.v1.Resource");
const decoder = createOtlpDecoder({ uniqueResourceKeys: ["reflector.tenant_id"] });
const stamper = createOtlpTenantStamper({
  tenantAttribute: "reflector.tenant_id",
  projectAttribute: "reflector.project_id",
});

const kv = (key: string, value: string) => ({ key, value: { stringValue: value } });
function span(n: number) {
  return {
    traceId: Buffer.from("0af7651916cd43dd8448eb211c80319c", "hex"),
    spanId: Buffer.from(`b7ad6b716920333${String(n)}`, "hex"),
    name: `invoke_agent a${String(n)}`,
    startTimeUnixNano: 1_764_158_400_000_000_000n.toString(),
    endTimeUnixNano: 1_764_158_401_000_000_000n.toString(),
  };
}
function encoded(resourceSpans: object[]): Buffer {
  return Buffer.from(Request.encode(Request.fromObject({ resourceSpans })).finish());
}

describe("appendResourceAttribute", () => {
  it("adds the attribute to every resource, and a resource to one that has none, keeping every other byte's meaning", () => {
    const body = encoded([
      { resource: { attributes: [kv("service.name", "a")] }, scopeSpans: [{ spans: [span(1)] }] },
      { scopeSpans: [{ spans: [span(2)] }], schemaUrl: "https://opentelemetry.io/schemas/1.30.0" },
    ]);
    const field = Buffer.from(Resource.encode({ attributes: [kv("reflector.tenant_id", "t1")] }).finish());
    const stamped = appendResourceAttribute(body, field);
    const spans = decoder.decode(stamped).spans;
    expect(spans.map((s) => s.resource)).toEqual([
      { "service.name": "a", "reflector.tenant_id": "t1" },
      { "reflector.tenant_id": "t1" },
    ]);
    expect(spans.map((s) => s.name)).toEqual(["invoke_agent a1", "invoke_agent a2"]);
    const object = Request.toObject(Request.decode(stamped)) as { resourceSpans: { schemaUrl?: string }[] };
    expect(object.resourceSpans[1]?.schemaUrl).toBe("https://opentelemetry.io/schemas/1.30.0");
  });
});

describe("the tenant stamper", () => {
  it("stamps protobuf in its bytes and OTLP/JSON as an object, the same way", () => {
    const body = encoded([
      { resource: { attributes: [kv("service.name", "a")] }, scopeSpans: [{ spans: [span(1)] }] },
    ]);
    const result = stamper.stamp(body, "protobuf", "acme", 1_000_000);
    if (!result.ok) throw new Error("refused");
    expect(decoder.decode(result.values[0] ?? Buffer.alloc(0)).spans[0]?.resource).toEqual({
      "service.name": "a",
      "reflector.tenant_id": "acme",
    });
    const json = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [kv("reflector.tenant_id", "acme")] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                  name: "x",
                  startTimeUnixNano: "1",
                  endTimeUnixNano: "2",
                },
              ],
            },
          ],
        },
      ],
    });
    const again = stamper.stamp(Buffer.from(json), "json", "acme", 1_000_000);
    if (!again.ok) throw new Error("refused");
    // The resource named the key's own tenant: it still names it once.
    expect(decoder.decode(again.values[0] ?? Buffer.alloc(0)).spans[0]?.resource).toEqual({
      "reflector.tenant_id": "acme",
    });
    expect(stamper.stamp(Buffer.from(json), "json", "other", 1_000_000)).toEqual({
      ok: false,
      otherTenant: "acme",
    });
  });

  it("refuses a lone span over the record budget by its size", () => {
    const body = encoded([{ resource: { attributes: [] }, scopeSpans: [{ spans: [span(1)] }] }]);
    const result = stamper.stamp(body, "protobuf", "acme", 20);
    expect(result).toMatchObject({ ok: false });
    expect((result as { spanBytes: number }).spanBytes).toBeGreaterThan(20);
  });
});

describe("splitRequest", () => {
  it("keeps spans in order under their own resource and scope", () => {
    const resourceA = { attributes: [kv("service.name", "a")] };
    const scope = { name: "s" };
    const request = {
      resourceSpans: [
        {
          resource: resourceA,
          scopeSpans: [{ scope, spans: ["1", "2", "3", "4", "5"].map((n) => n.repeat(50)) }],
        },
      ],
    };
    const parts = splitRequest(request, (part) => JSON.stringify(part).length, 300);
    if (!Array.isArray(parts)) throw new Error("refused");
    expect(parts.length).toBeGreaterThan(1);
    expect(
      parts.flatMap((p) => p.resourceSpans?.flatMap((rs) => rs.scopeSpans?.flatMap((ss) => ss.spans))),
    ).toEqual(["1", "2", "3", "4", "5"].map((n) => n.repeat(50)));
    for (const part of parts) {
      expect(JSON.stringify(part).length).toBeLessThanOrEqual(300);
      expect(part.resourceSpans?.[0]?.resource).toBe(resourceA);
    }
  });
});
