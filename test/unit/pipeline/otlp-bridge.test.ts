import { describe, expect, it } from "vitest";
import type { OtlpSpan } from "../../../src/domain/otlp/otlp-span.js";
import { createOtlpBridge } from "../../../src/pipeline/otlp-bridge.js";
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

/** The store's contract in memory: what the bridge is handed and what it marks. */
function fakeStore() {
  const added: IncomingSpan[] = [];
  const marked = new Map<string, TraceClosing>();
  let ready: ClosingTrace[] = [];
  const store: OtlpSpanStore = {
    add: (spans) => {
      added.push(...spans);
      return Promise.resolve({ stored: spans.length, late: 0 });
    },
    closeReady: async (_options, close) => {
      const claimed = ready;
      ready = [];
      const outcome = await close(claimed);
      for (const [id, result] of outcome) marked.set(id, result);
      return claimed.length;
    },
    expire: () => Promise.resolve([]),
  };
  return { store, added, marked, setReady: (traces: ClosingTrace[]) => (ready = traces) };
}

function bridgeWith(store: OtlpSpanStore) {
  const published: BridgedEvent[] = [];
  const dead: string[] = [];
  const bridge = createOtlpBridge({
    store,
    publisher: {
      publish: (events) => {
        published.push(...events);
        return Promise.resolve();
      },
      deadLetter: (traceId) => {
        dead.push(traceId);
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
    settings: { graceMs: 0, timeoutMs: 60_000, sweepIntervalMs: 1_000 },
    observer: { spans: () => undefined, traces: () => undefined },
    onSweepError: (err) => {
      throw err;
    },
  });
  return { bridge, published, dead };
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
    fake.setReady([
      { traceId: root.traceId, spans: [root] },
      { traceId: subAgent.traceId, spans: [subAgent, subAgentParentArrived] },
    ]);
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
    fake.setReady([{ traceId: root.traceId, spans: [broken] }]);
    await bridge.sweep();
    expect(published).toEqual([]);
    expect(dead).toEqual([root.traceId]);
    expect(fake.marked.get(root.traceId)).toBe("invalid");
  });
});
