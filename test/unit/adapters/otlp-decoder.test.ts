import { describe, expect, it } from "vitest";
import { createOtlpDecoder, detectEncoding } from "../../../src/adapters/otlp/otlp-decoder.js";
import { ReflectorError } from "../../../src/domain/errors.js";
import { runMultiAgentTask, sdkTracer, serialize } from "../../support/otel-traces.js";

const decoder = createOtlpDecoder();

function sdkSpans() {
  const sdk = sdkTracer({ "service.name": "churn-agents", "reflector.tenant_id": "acme" });
  const run = runMultiAgentTask(sdk.tracer, { conversationId: "conv-1" });
  return { run, spans: sdk.finished() };
}

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (err) {
    return err instanceof ReflectorError ? err.code : "not a ReflectorError";
  }
  return undefined;
}

describe("OTLP decoder", () => {
  it("reads the SDK's protobuf and JSON bytes of one export as the same spans", () => {
    const { run, spans } = sdkSpans();
    const fromProto = decoder.decode(serialize(spans, "protobuf"));
    const fromJson = decoder.decode(serialize(spans, "json"));
    expect(fromProto.encoding).toBe("protobuf");
    expect(fromJson.encoding).toBe("json");
    expect(fromProto.spans).toEqual(fromJson.spans);
    expect(fromProto.spans).toHaveLength(spans.length);
    const root = fromProto.spans.find((s) => s.name === "invoke_agent orchestrator");
    expect(root).toMatchObject({
      traceId: run.traceId,
      parentSpanId: null,
      status: { code: 2, message: "could not answer: the churn query failed" },
      resource: { "service.name": "churn-agents", "reflector.tenant_id": "acme" },
    });
    const sql = fromProto.spans.find((s) => s.name === "execute_tool postgres_query");
    expect(sql?.parentSpanId).toBe(root?.spanId);
    // The SDK says the parent is local (flags bit 8 set, bit 9 clear).
    expect(sql?.parentIsRemote).toBe(false);
    expect(sql?.events[0]).toMatchObject({
      name: "exception",
      attributes: {
        "exception.type": "QueryTimeoutError",
        "exception.message": "Query execution exceeded 30s limit",
      },
    });
    const plan = fromProto.spans.find((s) => s.name === "chat gpt-4o");
    expect(plan?.attributes["gen_ai.usage.input_tokens"]).toBe(412);
    expect(BigInt(plan?.endTimeUnixNano ?? 0)).toBeGreaterThan(BigInt(plan?.startTimeUnixNano ?? 0));
  });

  it("tells the encodings apart by the first byte, newline and BOM included", () => {
    expect(detectEncoding(Buffer.from(' \n{"resourceSpans":[]}'))).toBe("json");
    expect(detectEncoding(Buffer.from('\uFEFF{"resourceSpans":[]}'))).toBe("json");
    expect(detectEncoding(Buffer.from([0x0a, 0x02, 0x0a, 0x00]))).toBe("protobuf");
    expect(detectEncoding(Buffer.alloc(0))).toBe("protobuf");
  });

  it("reads the Collector's protojson: int64 as strings, enums by name", () => {
    const record = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "reflector.tenant_id", value: { stringValue: "acme" } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "5B8EFFF798038103D269B633813FC60C",
                  spanId: "EEE19B7EC3C1B174",
                  name: "invoke_agent a",
                  startTimeUnixNano: "1544712660000000000",
                  endTimeUnixNano: "1544712661000000000",
                  attributes: [{ key: "n", value: { intValue: "9007199254740993" } }],
                  status: { code: "STATUS_CODE_ERROR" },
                },
              ],
            },
          ],
        },
      ],
    };
    const { spans } = decoder.decode(Buffer.from(JSON.stringify(record)));
    expect(spans[0]).toMatchObject({
      traceId: "5b8efff798038103d269b633813fc60c",
      spanId: "eee19b7ec3c1b174",
      parentIsRemote: null,
      status: { code: 2 },
      attributes: { n: "9007199254740993" },
    });
  });

  it("refuses what is not an OTLP trace export, with the reason", () => {
    expect(codeOf(() => decoder.decode(Buffer.from("{not json")))).toBe("DECODE_FAILED");
    expect(codeOf(() => decoder.decode(Buffer.from("hello, world")))).toBe("DECODE_FAILED");
    expect(codeOf(() => decoder.decode(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])))).toBe(
      "DECODE_FAILED",
    );
    const badId = {
      resourceSpans: [
        {
          scopeSpans: [
            { spans: [{ traceId: "xyz", spanId: "1", startTimeUnixNano: "1", endTimeUnixNano: "2" }] },
          ],
        },
      ],
    };
    expect(codeOf(() => decoder.decode(Buffer.from(JSON.stringify(badId))))).toBe("SCHEMA_INVALID");
    try {
      decoder.decode(Buffer.from(JSON.stringify(badId)));
    } catch (err) {
      expect((err as Error).message).toContain(
        "resourceSpans.0.scopeSpans.0.spans.0.traceId: must be 32 hex digits",
      );
    }
  });

  it("makes text storable: a NUL byte and a lone surrogate become U+FFFD", () => {
    const record = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "5b8efff798038103d269b633813fc60c",
                  spanId: "eee19b7ec3c1b174",
                  name: "bad\u0000name\ud800",
                  startTimeUnixNano: "1",
                  endTimeUnixNano: "2",
                },
              ],
            },
          ],
        },
      ],
    };
    const { spans } = decoder.decode(Buffer.from(JSON.stringify(record)));
    expect(spans[0]?.name).toBe("bad\uFFFDname\uFFFD");
  });

  it("keeps odd attribute entries out and cuts nesting deeper than eight levels", () => {
    let nested: unknown = { stringValue: "bottom" };
    for (let i = 0; i < 50; i += 1) nested = { kvlistValue: { values: [{ key: "k", value: nested }] } };
    const record = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "5b8efff798038103d269b633813fc60c",
                  spanId: "eee19b7ec3c1b174",
                  startTimeUnixNano: "1",
                  endTimeUnixNano: "2",
                  attributes: [
                    { key: "deep", value: nested },
                    { value: { stringValue: "no key" } },
                    7,
                    { key: "odd", value: { weird: 1 } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const { spans } = decoder.decode(Buffer.from(JSON.stringify(record)));
    expect(Object.keys(spans[0]?.attributes ?? {})).toEqual(["deep", "odd"]);
    expect(spans[0]?.attributes.odd).toBeNull();
    expect(JSON.stringify(spans[0]?.attributes.deep)).toContain("[nested too deep]");
  });
});

describe("OTLP decoder: a tenant cannot be smuggled", () => {
  const span = {
    traceId: "5b8efff798038103d269b633813fc60c",
    spanId: "0000000000000001",
    name: "invoke_agent a",
    startTimeUnixNano: "1764000000000000000",
    endTimeUnixNano: "1764000001000000000",
  };
  const record = (attributes: unknown[]) =>
    Buffer.from(
      JSON.stringify({ resourceSpans: [{ resource: { attributes }, scopeSpans: [{ spans: [span] }] }] }),
    );
  const strict = createOtlpDecoder({ uniqueResourceKeys: ["reflector.tenant_id", "reflector.project_id"] });

  it("reads a __proto__ key as an ordinary attribute, never as the map's prototype", () => {
    const smuggled = record([
      {
        key: "__proto__",
        value: {
          kvlistValue: { values: [{ key: "reflector.tenant_id", value: { stringValue: "victim" } }] },
        },
      },
    ]);
    const [decoded] = strict.decode(smuggled).spans;
    expect(decoded?.resource["reflector.tenant_id"]).toBeUndefined();
    expect(Object.getPrototypeOf(decoded?.resource)).toBeNull();
    expect(Object.keys(decoded?.resource ?? {})).toEqual(["__proto__"]);
  });

  it("refuses a resource that names its tenant twice (SCHEMA_INVALID), and allows other repeated keys", () => {
    const twice = record([
      { key: "reflector.tenant_id", value: { stringValue: "acme" } },
      { key: "reflector.tenant_id", value: { stringValue: "victim" } },
    ]);
    expect(codeOf(() => strict.decode(twice))).toBe("SCHEMA_INVALID");
    expect(() => strict.decode(twice)).toThrow(/reflector\.tenant_id is given more than once/);
    const hosts = record([
      { key: "host.name", value: { stringValue: "a" } },
      { key: "host.name", value: { stringValue: "b" } },
    ]);
    expect(strict.decode(hosts).spans[0]?.resource["host.name"]).toBe("b");
  });
});
