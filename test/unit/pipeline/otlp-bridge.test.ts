import { describe, expect, it } from "vitest";
import type { OtlpSpan } from "../../../src/domain/otlp/otlp-span.js";
import { ReflectorError } from "../../../src/domain/errors.js";
import { createOtlpBridge } from "../../../src/pipeline/otlp-bridge.js";
import { createMemoryNewTraceLimit, type NewTraceLimit } from "../../../src/pipeline/tenant-limits.js";
import type {
  BridgedEvent,
  ClosingTrace,
  IncomingSpan,
  OtlpSpanStore,
  TraceClosing,
} from "../../../src/pipeline/otlp-bridge-ports.js";

const root: OtlpSpan = {
  traceId: "5b8efff798038103d269b633813fc60c",
  spanId: "0000000000000001",
  parentSpanId: null,
  parentIsRemote: null,
  name: "invoke_agent a",
  startTimeUnixNano: "1764000000000000000",
  endTimeUnixNano: "1764000001000000000",
  attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a" },
  events: [],
  status: { code: 0, message: "" },
  resource: { "reflector.tenant_id": "acme", "host.name": "box-1", "process.pid": 42 },
};
const subAgent: OtlpSpan = {
  ...root,
  traceId: "6b8efff798038103d269b633813fc60c",
  spanId: "0000000000000002",
  parentSpanId: "00000000000000ff",
  parentIsRemote: null,
};
const subAgentParentArrived: OtlpSpan = {
  ...root,
  traceId: subAgent.traceId,
  spanId: "00000000000000ff",
  parentSpanId: "00000000000000fe",
  parentIsRemote: false,
  attributes: { "gen_ai.operation.name": "execute_tool" },
};

/** A trace as the fake store hands it out: its spans read on demand. */
const ready = (traceId: string, spans: OtlpSpan[], tenantId = "acme"): ClosingTrace => ({
  tenantId,
  traceId,
  spans: () => Promise.resolve(spans),
});

/** The store's contract in memory: what the bridge is handed and what it marks. */
function fakeStore() {
  const added: IncomingSpan[] = [];
  const marked = new Map<string, TraceClosing>();
  let pending: ClosingTrace[] = [];
  let expiries = 0;
  const asked: { closeFor?: string | undefined; expireFor?: string | undefined } = {};
  const store: OtlpSpanStore = {
    add: (spans) => {
      added.push(...spans);
      return Promise.resolve({ stored: spans.length, late: 0, oversized: [] });
    },
    closeReady: async (options, close) => {
      asked.closeFor = options.tenantId;
      const claimed = pending;
      pending = [];
      const outcome = await close(claimed);
      for (const [trace, result] of outcome) marked.set(trace.traceId, result);
      return claimed.length;
    },
    expire: (options) => {
      asked.expireFor = options.tenantId;
      expiries += 1;
      return Promise.resolve([]);
    },
  };
  return {
    store,
    added,
    marked,
    expiries: () => expiries,
    asked,
    setReady: (traces: ClosingTrace[]) => (pending = traces),
  };
}

function bridgeWith(
  store: OtlpSpanStore,
  options: {
    publish?: (events: readonly BridgedEvent[]) => Promise<ReadonlySet<BridgedEvent>>;
    boundTenant?: string;
    newTraces?: NewTraceLimit;
    counted?: string[];
  } = {},
) {
  const published: BridgedEvent[] = [];
  const dead: string[] = [];
  const sweepErrors: unknown[] = [];
  const bridge = createOtlpBridge({
    store,
    publisher: {
      publish:
        options.publish ??
        ((events) => {
          published.push(...events);
          return Promise.resolve(new Set());
        }),
      deadLetter: (trace) => {
        dead.push(trace.traceId);
        return Promise.resolve();
      },
    },
    clock: { now: () => new Date("2026-11-24T12:00:00Z") },
    mapping: {
      tenantAttribute: "reflector.tenant_id",
      projectAttribute: "reflector.project_id",
      defaultTenant: "d",
      defaultProject: "d",
    },
    settings: {
      graceMs: 0,
      timeoutMs: 60_000,
      sweepIntervalMs: 1_000,
      closers: 1,
      ...(options.boundTenant ? { boundTenant: options.boundTenant } : {}),
    },
    observer: {
      spans: () => undefined,
      traces: (result, count) => {
        options.counted?.push(`${result}:${String(count)}`);
      },
    },
    ...(options.newTraces ? { newTraces: options.newTraces } : {}),
    onSweepError: (err) => {
      sweepErrors.push(err);
    },
  });
  return { bridge, published, dead, sweepErrors };
}

describe("OTLP bridge", () => {
  it("stores spans with their root flag and only the resource attributes the mapping reads", async () => {
    const fake = fakeStore();
    const { bridge } = bridgeWith(fake.store);
    await bridge.ingest([root, subAgent, subAgentParentArrived]);
    expect(fake.added.map((a) => a.rootCandidate)).toEqual([true, true, false]);
    expect(fake.added[0]?.span.resource).toEqual({ "reflector.tenant_id": "acme" });
  });

  it("publishes a complete trace with its traceparent; puts back one whose candidate root has a parent", async () => {
    const fake = fakeStore();
    const { bridge, published } = bridgeWith(fake.store);
    fake.setReady([ready(root.traceId, [root]), ready(subAgent.traceId, [subAgent, subAgentParentArrived])]);
    await bridge.sweep();
    expect(published.map((p) => [p.event.eventId, p.traceparent])).toEqual([
      [`otlp-${root.traceId}`, `00-${root.traceId}-${root.spanId}-01`],
    ]);
    expect(Object.fromEntries(fake.marked)).toEqual({
      [root.traceId]: "published",
      [subAgent.traceId]: "wait",
    });
  });

  it("dead-letters a trace whose event the contract refuses, and marks it invalid", async () => {
    const fake = fakeStore();
    const { bridge, published, dead } = bridgeWith(fake.store);
    // A conversation id that reads as rerun 999,999,999 of a loop: the contract refuses such a loopId.
    const broken = {
      ...root,
      status: { code: 2 as const, message: "" },
      attributes: { ...root.attributes, "gen_ai.conversation.id": "x_r999999999" },
    };
    fake.setReady([ready(root.traceId, [broken])]);
    await bridge.sweep();
    expect(published).toEqual([]);
    expect(dead).toEqual([root.traceId]);
    expect(fake.marked.get(root.traceId)).toBe("invalid");
  });

  it("drops the spans of new traces past the tenant's new traces a minute, and counts them; known traces go on", async () => {
    const fake = fakeStore();
    const counted: string[] = [];
    const newTraces = createMemoryNewTraceLimit({ perMinute: 2, rememberMs: 3_600_000 });
    const { bridge } = bridgeWith(fake.store, { newTraces, counted });
    const trace = (n: number, tenant = "acme"): OtlpSpan => ({
      ...root,
      traceId: n.toString(16).padStart(32, "0"),
      resource: { "reflector.tenant_id": tenant },
    });
    await bridge.ingest([trace(1), trace(2), trace(3), trace(1), trace(4, "other")]);
    expect(fake.added.map((a) => `${a.tenantId}/${a.span.traceId.slice(-1)}`)).toEqual([
      "acme/1",
      "acme/2",
      "acme/1",
      "other/4",
    ]);
    expect(counted).toEqual(["over_limit:1"]);
    // Later spans of an admitted trace are not new; another new one still is over.
    fake.added.length = 0;
    await bridge.ingest([trace(2), trace(5)]);
    expect(fake.added.map((a) => a.span.traceId.slice(-1))).toEqual(["2"]);
  });

  it("keys each span by its tenant: the resource's, else the default", async () => {
    const fake = fakeStore();
    const { bridge } = bridgeWith(fake.store);
    await bridge.ingest([root, { ...subAgent, resource: {} }]);
    expect(fake.added.map((a) => a.tenantId)).toEqual(["acme", "d"]);
  });

  it("under a tenant binding keeps every span as the bound tenant's and refuses one naming another", async () => {
    const fake = fakeStore();
    const { bridge } = bridgeWith(fake.store, { boundTenant: "globex" });
    await bridge.ingest([{ ...root, resource: {} }]);
    expect(fake.added.map((a) => a.tenantId)).toEqual(["globex"]);
    await expect(bridge.ingest([root])).rejects.toMatchObject({ code: "TENANT_TOPIC_MISMATCH" });
    expect(fake.added).toHaveLength(1);
  });

  it("bound to one tenant, closes and expires that tenant's traces only (another's bridge shares the store)", async () => {
    const fake = fakeStore();
    const { bridge } = bridgeWith(fake.store, { boundTenant: "globex" });
    await bridge.sweep();
    expect(fake.asked).toEqual({ closeFor: "globex", expireFor: "globex" });
    const unbound = fakeStore();
    await bridgeWith(unbound.store).bridge.sweep();
    expect(unbound.asked).toEqual({ closeFor: undefined, expireFor: undefined });
  });

  it("publishes a stored trace as its tenant's, whatever its root's resource says", async () => {
    const fake = fakeStore();
    const { bridge, published } = bridgeWith(fake.store);
    fake.setReady([ready(root.traceId, [root], "globex")]);
    await bridge.sweep();
    expect(published[0]?.event.tenantId).toBe("globex");
  });

  it("closes a trace whose event the input topic refuses alone, as invalid; the others are published", async () => {
    const fake = fakeStore();
    const other = { ...root, traceId: "7b8efff798038103d269b633813fc60c" };
    const { bridge } = bridgeWith(fake.store, {
      publish: (events) => Promise.resolve(new Set(events.filter((e) => e.event.taskId === root.traceId))),
    });
    fake.setReady([ready(root.traceId, [root]), ready(other.traceId, [other])]);
    await bridge.sweep();
    expect(Object.fromEntries(fake.marked)).toEqual({
      [root.traceId]: "invalid",
      [other.traceId]: "published",
    });
  });

  it("dead-letters a trace that cannot be mapped (a bug on odd spans) instead of retrying it for ever", async () => {
    const fake = fakeStore();
    const { bridge, dead, published } = bridgeWith(fake.store);
    const other = { ...root, traceId: "7b8efff798038103d269b633813fc60c" };
    const broken: ClosingTrace = {
      tenantId: "acme",
      traceId: root.traceId,
      spans: () => Promise.resolve([{ ...root, startTimeUnixNano: "not a number" }]),
    };
    fake.setReady([broken, ready(other.traceId, [other])]);
    await bridge.sweep();
    expect(dead).toEqual([root.traceId]);
    expect(published.map((p) => p.event.taskId)).toEqual([other.traceId]);
    expect(fake.marked.get(root.traceId)).toBe("invalid");
  });

  it("expires overdue traces even when closing fails (Kafka away), then reports the failure", async () => {
    const fake = fakeStore();
    const { bridge } = bridgeWith(fake.store, {
      publish: () => Promise.reject(new ReflectorError("PUBLISH_FAILED", "broker away")),
    });
    fake.setReady([ready(root.traceId, [root])]);
    await expect(bridge.sweep()).rejects.toMatchObject({ code: "PUBLISH_FAILED" });
    expect(fake.expiries()).toBe(1);
    expect(fake.marked.size).toBe(0);
  });
});
