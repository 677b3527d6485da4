import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createPgOtlpSpanStore } from "../../src/adapters/postgres/pg-otlp-span-store.js";
import { ReflectorError } from "../../src/domain/errors.js";
import type { OtlpSpan } from "../../src/domain/otlp/otlp-span.js";
import type { ClosingTrace, IncomingSpan, TraceClosing } from "../../src/pipeline/otlp-bridge-ports.js";

/** The span store on the real Postgres: traces keyed by tenant, caps, age, one trace loaded at a time. */
const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 4 });
const store = createPgOtlpSpanStore(pool);
afterAll(() => pool.end());

const traceId = () => randomBytes(16).toString("hex");
const spanId = (n: number) => n.toString(16).padStart(16, "0");
const caps = { maxSpans: 1_000, maxBytes: 10_000_000 };
const t0 = new Date("2026-11-26T08:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

function span(trace: string, n: number, parent: number | null, tenant = "acme"): IncomingSpan {
  const s: OtlpSpan = {
    traceId: trace,
    spanId: spanId(n),
    parentSpanId: parent === null ? null : spanId(parent),
    parentIsRemote: null,
    name: "invoke_agent a",
    startTimeUnixNano: "1764000000000000000",
    endTimeUnixNano: "1764000001000000000",
    attributes: {},
    events: [],
    status: { code: 0, message: "" },
    resource: { "reflector.tenant_id": tenant },
  };
  return { tenantId: tenant, span: s, rootCandidate: parent === null };
}

/** Claims what is ready at `now` and records what each claimed trace held; closes them as `as`. */
async function claim(now: Date, only: string[], as: TraceClosing = "published") {
  const seen: { tenantId: string; traceId: string; spans: number }[] = [];
  await store.closeReady({ now, graceMs: 5_000, maxAgeMs: 60_000, limit: 1_000 }, async (traces) => {
    const outcome = new Map<ClosingTrace, TraceClosing>();
    for (const trace of traces) {
      if (!only.includes(trace.traceId)) {
        outcome.set(trace, "wait");
        continue;
      }
      seen.push({ tenantId: trace.tenantId, traceId: trace.traceId, spans: (await trace.spans()).length });
      outcome.set(trace, as);
    }
    return outcome;
  });
  return seen;
}

describe("OTLP span store (Postgres)", () => {
  it("keeps two tenants' traces with one id apart: neither's spans join the other's", async () => {
    const id = traceId();
    await store.add([span(id, 1, null, "acme"), span(id, 2, 1, "acme")], t0, caps);
    await store.add([span(id, 9, 1, "globex")], t0, caps);
    const seen = await claim(at(10_000), [id]);
    expect(seen.sort((a, b) => a.tenantId.localeCompare(b.tenantId))).toEqual([
      { tenantId: "acme", traceId: id, spans: 2 },
    ]);
    // globex's lone child has no root: it is not ready, and it is still open under globex alone.
    const rows = await pool.query<{ tenant_id: string; state: string }>(
      "SELECT tenant_id, state FROM otlp_traces WHERE trace_id = $1 ORDER BY tenant_id",
      [id],
    );
    expect(rows.rows).toEqual([
      { tenant_id: "acme", state: "published" },
      { tenant_id: "globex", state: "open" },
    ]);
  });

  it("lets a bridge bound to one tenant claim and expire that tenant's traces only", async () => {
    const acme = traceId();
    const globex = traceId();
    await store.add([span(acme, 1, null, "acme"), span(globex, 1, null, "globex")], t0, caps);
    const claimed: string[] = [];
    await store.closeReady(
      { now: at(10_000), graceMs: 5_000, maxAgeMs: 60_000, limit: 1_000, tenantId: "globex" },
      (traces) => {
        claimed.push(...traces.map((t) => `${t.tenantId}/${t.traceId}`));
        return Promise.resolve(new Map(traces.map((t) => [t, "published" as const])));
      },
    );
    expect(claimed.filter((c) => c.endsWith(acme) || c.endsWith(globex))).toEqual([`globex/${globex}`]);
    const rootless = traceId();
    await store.add([span(rootless, 2, 1, "acme")], t0, caps);
    const expired = await store.expire({
      now: at(120_000),
      timeoutMs: 60_000,
      forgetAfterMs: 3_600_000,
      limit: 1_000,
      tenantId: "globex",
    });
    expect(expired.map((t) => t.traceId)).not.toContain(rootless);
  });

  it("closes a trace that passes its span cap as oversized, drops its spans, and counts later ones as late", async () => {
    const id = traceId();
    const small = { maxSpans: 3, maxBytes: 10_000_000 };
    const first = await store.add([span(id, 1, null), span(id, 2, 1)], t0, small);
    expect(first).toMatchObject({ stored: 2, late: 0, oversized: [] });
    const second = await store.add([span(id, 3, 1), span(id, 4, 1)], t0, small);
    expect(second.oversized).toEqual([{ tenantId: "acme", traceId: id, spanCount: 4 }]);
    const third = await store.add([span(id, 5, 1)], t0, small);
    expect(third).toMatchObject({ stored: 0, late: 1 });
    const left = await pool.query("SELECT 1 FROM otlp_spans WHERE trace_id = $1", [id]);
    expect(left.rowCount).toBe(0);
  });

  it("closes a trace that passes its byte cap; a span sent twice is stored once", async () => {
    const id = traceId();
    const bytes = { maxSpans: 1_000, maxBytes: 1_000 };
    await store.add([span(id, 1, null), span(id, 1, null)], t0, bytes);
    const stored = await pool.query("SELECT 1 FROM otlp_spans WHERE trace_id = $1", [id]);
    expect(stored.rowCount).toBe(1);
    const over = await store.add([span(id, 2, 1), span(id, 3, 1), span(id, 4, 1)], t0, bytes);
    expect(over.oversized.map((t) => t.traceId)).toEqual([id]);
  });

  it("publishes a trace whose new roots keep restarting the grace once it is as old as the timeout", async () => {
    const id = traceId();
    for (let s = 0; s <= 70; s += 4) await store.add([span(id, s + 1, null)], at(s * 1_000), caps);
    // The latest root arrived 2 s before: within the grace, but the trace is 72 s old (> 60 s).
    expect(await claim(at(72_000), [id])).toEqual([{ tenantId: "acme", traceId: id, spans: 18 }]);
  });

  it("lets the closer's own error through as it is, not as a Postgres outage, and keeps the traces open", async () => {
    const id = traceId();
    await store.add([span(id, 1, null)], t0, caps);
    const kafkaDown = new ReflectorError("PUBLISH_FAILED", "broker away");
    await expect(
      store.closeReady({ now: at(10_000), graceMs: 5_000, maxAgeMs: 60_000, limit: 1_000 }, () =>
        Promise.reject(kafkaDown),
      ),
    ).rejects.toBe(kafkaDown);
    const state = await pool.query<{ state: string }>("SELECT state FROM otlp_traces WHERE trace_id = $1", [
      id,
    ]);
    expect(state.rows[0]?.state).toBe("open");
    await claim(at(10_000), [id]);
  });
});
