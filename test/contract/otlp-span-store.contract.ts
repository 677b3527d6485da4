import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { OtlpSpan } from "../../src/domain/otlp/otlp-span.js";
import type {
  ClosingTrace,
  IncomingSpan,
  OtlpSpanStore,
  TraceClosing,
} from "../../src/pipeline/otlp-bridge-ports.js";

/**
 * The OTLP span store's contract (src/pipeline/otlp-bridge-ports.ts), one suite for every
 * implementation: the in-memory fake and the Postgres store. `make` returns the store under test;
 * each case works in a tenant of its own and claims and expires that tenant's traces only, so a
 * shared database needs no cleaning and other traces in it are never touched.
 */
export function otlpSpanStoreContract(name: string, make: () => OtlpSpanStore | Promise<OtlpSpanStore>) {
  const newTenant = () => `contract-${randomUUID().slice(0, 8)}`;
  const newTrace = () => randomBytes(16).toString("hex");
  const spanId = (n: number) => n.toString(16).padStart(16, "0");
  const caps = { maxSpans: 1_000, maxBytes: 10_000_000 };
  const t0 = new Date("2026-11-26T08:00:00Z");
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const timing = { graceMs: 5_000, maxAgeMs: 60_000, limit: 100 };

  function span(tenantId: string, traceId: string, n: number, parent: number | null): IncomingSpan {
    const s: OtlpSpan = {
      traceId,
      spanId: spanId(n),
      parentSpanId: parent === null ? null : spanId(parent),
      parentIsRemote: null,
      name: `invoke_agent step-${String(n)}`,
      startTimeUnixNano: "1764000000000000000",
      endTimeUnixNano: "1764000001000000000",
      attributes: { "gen_ai.agent.name": "planner" },
      events: [],
      status: { code: 0, message: "" },
      resource: { "reflector.tenant_id": tenantId },
    };
    return { tenantId, span: s, rootCandidate: parent === null };
  }

  /** Claims the tenant's ready traces at `now`, closes each as `as`, and says what each held. */
  async function claim(store: OtlpSpanStore, tenantId: string, now: Date, as: TraceClosing = "published") {
    const seen: { traceId: string; spanIds: string[] }[] = [];
    const claimed = await store.closeReady({ now, ...timing, tenantId }, async (traces) => {
      const outcome = new Map<ClosingTrace, TraceClosing>();
      for (const trace of traces) {
        expect(trace.tenantId).toBe(tenantId);
        const spans = await trace.spans();
        seen.push({ traceId: trace.traceId, spanIds: spans.map((s) => s.spanId).sort() });
        outcome.set(trace, as);
      }
      return outcome;
    });
    expect(claimed).toBe(seen.length);
    return seen.sort((a, b) => a.traceId.localeCompare(b.traceId));
  }

  describe(`OTLP span store contract: ${name}`, () => {
    it("stores a span once however often it is added, and hands a trace out once its root's grace has passed", async () => {
      const store = await make();
      const tenant = newTenant();
      const trace = newTrace();
      const spans = [span(tenant, trace, 1, null), span(tenant, trace, 2, 1)];
      expect(await store.add(spans, t0, caps)).toEqual({ stored: 2, late: 0, oversized: [] });
      expect(await store.add(spans, at(1_000), caps)).toEqual({ stored: 0, late: 0, oversized: [] });
      // The root added again at 1 s restarted the grace: 5 s after that, not after the first.
      expect(await claim(store, tenant, at(5_500))).toEqual([]);
      expect(await claim(store, tenant, at(6_000))).toEqual([
        { traceId: trace, spanIds: [spanId(1), spanId(2)] },
      ]);
      // Closed: never handed out again, and what arrives for it now is late.
      expect(await claim(store, tenant, at(60_000))).toEqual([]);
      expect(await store.add([span(tenant, trace, 3, 1)], at(61_000), caps)).toEqual({
        stored: 0,
        late: 1,
        oversized: [],
      });
    });

    it("a new root restarts the grace, until the trace is as old as the maximum age", async () => {
      const store = await make();
      const tenant = newTenant();
      const trace = newTrace();
      await store.add([span(tenant, trace, 1, null)], t0, caps);
      await store.add([span(tenant, trace, 2, null)], at(4_000), caps);
      expect(await claim(store, tenant, at(6_000))).toEqual([]);
      expect(await claim(store, tenant, at(9_000))).toHaveLength(1);
      const old = newTrace();
      for (let ms = 0; ms < 60_000; ms += 4_000)
        await store.add([span(tenant, old, ms + 10, null)], at(ms), caps);
      expect(await claim(store, tenant, at(59_000))).toEqual([]);
      expect((await claim(store, tenant, at(60_000))).map((c) => c.traceId)).toEqual([old]);
    });

    it("a trace put back to wait keeps its spans and is handed out again only after another root", async () => {
      const store = await make();
      const tenant = newTenant();
      const trace = newTrace();
      await store.add([span(tenant, trace, 2, 1)], t0, caps);
      await store.add([span(tenant, trace, 1, null)], at(1_000), caps);
      expect(await claim(store, tenant, at(6_000), "wait")).toHaveLength(1);
      expect(await claim(store, tenant, at(30_000))).toEqual([]);
      await store.add([span(tenant, trace, 0, null)], at(31_000), caps);
      expect(await claim(store, tenant, at(36_000))).toEqual([
        { traceId: trace, spanIds: [spanId(0), spanId(1), spanId(2)] },
      ]);
    });

    it("leaves the traces open and lets the closer's own error through when it throws", async () => {
      const store = await make();
      const tenant = newTenant();
      const trace = newTrace();
      await store.add([span(tenant, trace, 1, null)], t0, caps);
      const failure = new Error("the publisher refused");
      await expect(
        store.closeReady({ now: at(6_000), ...timing, tenantId: tenant }, () => Promise.reject(failure)),
      ).rejects.toBe(failure);
      expect(await claim(store, tenant, at(7_000))).toEqual([{ traceId: trace, spanIds: [spanId(1)] }]);
    });

    it("hands out at most `limit` traces, oldest root first", async () => {
      const store = await make();
      const tenant = newTenant();
      const ids = [newTrace(), newTrace(), newTrace()];
      for (const [i, id] of ids.entries()) await store.add([span(tenant, id, 1, null)], at(i * 1_000), caps);
      const firstTwo: string[] = [];
      await store.closeReady({ now: at(60_000), ...timing, limit: 2, tenantId: tenant }, (traces) => {
        firstTwo.push(...traces.map((t) => t.traceId));
        return Promise.resolve(new Map(traces.map((t) => [t, "published" as const])));
      });
      expect(firstTwo).toEqual(ids.slice(0, 2));
      expect((await claim(store, tenant, at(60_000))).map((c) => c.traceId)).toEqual([ids[2]]);
    });

    it("closes a trace that passes a cap as oversized: its spans dropped, later ones late", async () => {
      const store = await make();
      const tenant = newTenant();
      const trace = newTrace();
      const small = { maxSpans: 3, maxBytes: 10_000_000 };
      expect(
        await store.add([span(tenant, trace, 1, null), span(tenant, trace, 2, 1)], t0, small),
      ).toMatchObject({
        stored: 2,
        oversized: [],
      });
      expect(
        await store.add([span(tenant, trace, 3, 1), span(tenant, trace, 4, 1)], at(1_000), small),
      ).toEqual({
        stored: 0,
        late: 2,
        oversized: [{ tenantId: tenant, traceId: trace, spanCount: 4 }],
      });
      expect(await store.add([span(tenant, trace, 5, 1)], at(2_000), small)).toEqual({
        stored: 0,
        late: 1,
        oversized: [],
      });
      expect(await claim(store, tenant, at(60_000))).toEqual([]);
      const bytes = newTrace();
      const tight = { maxSpans: 1_000, maxBytes: 600 };
      const result = await store.add([span(tenant, bytes, 1, null), span(tenant, bytes, 2, 1)], t0, tight);
      expect(result.oversized).toEqual([{ tenantId: tenant, traceId: bytes, spanCount: 2 }]);
    });

    it("expires a trace whose root never came, dropping its spans; a trace with a root does not expire", async () => {
      const store = await make();
      const tenant = newTenant();
      const rootless = newTrace();
      const rooted = newTrace();
      await store.add([span(tenant, rootless, 2, 1), span(tenant, rootless, 3, 1)], t0, caps);
      await store.add([span(tenant, rooted, 1, null)], t0, caps);
      const expire = (ms: number) =>
        store.expire({
          now: at(ms),
          timeoutMs: 30_000,
          forgetAfterMs: 3_600_000,
          limit: 100,
          tenantId: tenant,
        });
      expect(await expire(29_000)).toEqual([]);
      expect(await expire(30_000)).toEqual([{ tenantId: tenant, traceId: rootless, spanCount: 2 }]);
      expect(await expire(31_000)).toEqual([]);
      expect(await store.add([span(tenant, rootless, 1, null)], at(32_000), caps)).toMatchObject({ late: 1 });
      expect((await claim(store, tenant, at(40_000))).map((c) => c.traceId)).toEqual([rooted]);
    });

    it("keeps tenants apart: one trace id under two tenants is two traces, claimed and expired by their own", async () => {
      const store = await make();
      const acme = newTenant();
      const globex = newTenant();
      const trace = newTrace();
      await store.add([span(acme, trace, 1, null), span(acme, trace, 2, 1)], t0, caps);
      await store.add([span(globex, trace, 9, 1)], t0, caps);
      expect(await claim(store, globex, at(60_000))).toEqual([]);
      expect(await claim(store, acme, at(60_000))).toEqual([
        { traceId: trace, spanIds: [spanId(1), spanId(2)] },
      ]);
      const expire = (tenantId: string) =>
        store.expire({ now: at(60_000), timeoutMs: 30_000, forgetAfterMs: 3_600_000, limit: 100, tenantId });
      expect(await expire(acme)).toEqual([]);
      expect(await expire(globex)).toEqual([{ tenantId: globex, traceId: trace, spanCount: 1 }]);
    });

    it("forgets closed traces after a while: their id then starts a new trace", async () => {
      const store = await make();
      const tenant = newTenant();
      const trace = newTrace();
      await store.add([span(tenant, trace, 1, null)], t0, caps);
      expect(await claim(store, tenant, at(6_000))).toHaveLength(1);
      await store.expire({
        now: at(6_000 + 3_600_001),
        timeoutMs: 30_000,
        forgetAfterMs: 3_600_000,
        limit: 100,
        tenantId: tenant,
      });
      expect(await store.add([span(tenant, trace, 1, null)], at(7_200_000), caps)).toEqual({
        stored: 1,
        late: 0,
        oversized: [],
      });
    });
  });
}
