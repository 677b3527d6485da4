/**
 * Per-tenant volume limits (spans, new trace ids, new lessons a minute): the ports the OTLP ingest
 * and the pipeline ask, and in-memory forms of them for one process (tests, a single pod). The
 * Redis forms (`src/adapters/redis/tenant-volume-limit.ts`) count across pods.
 */

export interface TenantVolumeLimit {
  readonly perMinute: number;
  /** Null when `amount` was counted; otherwise the whole seconds until it could be (`Retry-After`). */
  take(tenantId: string, amount?: number): Promise<number | null>;
}

export interface NewTraceAdmission {
  /** The new trace ids that were not admitted (empty: all were, or none was new). */
  refused: string[];
  /** Seconds until the tenant's window has room again; null when nothing was refused. */
  retryAfterSeconds: number | null;
}

export interface NewTraceLimit {
  readonly perMinute: number;
  /**
   * Counts the ids among `traceIds` not seen before from this tenant. `all`: admits every new one
   * or none (an HTTP request answered 429 as a whole); `some`: as many as the window has room for
   * (a consumed batch, whose other traces go on).
   */
  admit(tenantId: string, traceIds: readonly string[], mode: "all" | "some"): Promise<NewTraceAdmission>;
}

const windowMs = 60_000;

/**
 * The spans of a consumed batch whose traces the tenant may start: each tenant's new trace ids
 * are admitted as far as its window has room, and the spans of the others are dropped (counted as
 * `over_limit`). A trace admitted once, here or over OTLP/HTTP, is never new again.
 */
export async function withinNewTraceLimit<T extends { tenantId: string; span: { traceId: string } }>(
  limit: NewTraceLimit,
  incoming: T[],
  observer: {
    traces(result: "over_limit", count: number): void;
    overLimit?(tenantId: string, traces: number): void;
  },
): Promise<T[]> {
  const byTenant = new Map<string, string[]>();
  for (const { tenantId, span } of incoming) {
    const ids = byTenant.get(tenantId);
    if (ids) ids.push(span.traceId);
    else byTenant.set(tenantId, [span.traceId]);
  }
  const refused = new Set<string>();
  for (const [tenantId, traceIds] of byTenant) {
    const admission = await limit.admit(tenantId, traceIds, "some");
    if (admission.refused.length === 0) continue;
    observer.traces("over_limit", admission.refused.length);
    observer.overLimit?.(tenantId, admission.refused.length);
    for (const id of admission.refused) refused.add(`${tenantId}\u0000${id}`);
  }
  if (refused.size === 0) return incoming;
  return incoming.filter(({ tenantId, span }) => !refused.has(`${tenantId}\u0000${span.traceId}`));
}

/** A fixed window of a minute per tenant, in this process; at most `maxTenants` are kept. */
export function createMemoryVolumeLimit(options: {
  perMinute: number;
  now?: () => number;
  maxTenants?: number;
}): TenantVolumeLimit {
  const now = options.now ?? Date.now;
  const windows = new Map<string, { start: number; used: number }>();
  return {
    perMinute: options.perMinute,
    take(tenantId, amount = 1) {
      if (amount <= 0) return Promise.resolve(null);
      const t = now();
      let w = windows.get(tenantId);
      if (!w || t - w.start >= windowMs) {
        w = { start: t, used: 0 };
        windows.delete(tenantId);
        if (windows.size >= (options.maxTenants ?? 10_000)) {
          const oldest = windows.keys().next().value;
          if (oldest !== undefined) windows.delete(oldest);
        }
        windows.set(tenantId, w);
      }
      if (w.used > 0 && w.used + amount > options.perMinute) {
        return Promise.resolve(Math.max(1, Math.ceil((w.start + windowMs - t) / 1000)));
      }
      w.used += amount;
      return Promise.resolve(null);
    },
  };
}

/** New trace ids per tenant a minute, in this process; ids remembered for `rememberMs` (bounded). */
export function createMemoryNewTraceLimit(options: {
  perMinute: number;
  rememberMs: number;
  now?: () => number;
  maxRemembered?: number;
}): NewTraceLimit {
  const now = options.now ?? Date.now;
  const maxRemembered = options.maxRemembered ?? 200_000;
  const seen = new Map<string, number>();
  const windows = new Map<string, { start: number; used: number }>();
  return {
    perMinute: options.perMinute,
    admit(tenantId, traceIds, mode) {
      const t = now();
      const fresh = [...new Set(traceIds)].filter((id) => {
        const at = seen.get(`${tenantId}\u0000${id}`);
        return at === undefined || t - at >= options.rememberMs;
      });
      if (fresh.length === 0) return Promise.resolve({ refused: [], retryAfterSeconds: null });
      let w = windows.get(tenantId);
      if (!w || t - w.start >= windowMs) {
        w = { start: t, used: 0 };
        windows.set(tenantId, w);
      }
      let room = Math.max(0, options.perMinute - w.used);
      if (mode === "all" && fresh.length > room) room = 0;
      const admitted = fresh.slice(0, room);
      w.used += admitted.length;
      for (const id of admitted) {
        seen.set(`${tenantId}\u0000${id}`, t);
        if (seen.size > maxRemembered) {
          const oldest = seen.keys().next().value;
          if (oldest !== undefined) seen.delete(oldest);
        }
      }
      const refused = fresh.slice(admitted.length);
      return Promise.resolve({
        refused,
        retryAfterSeconds:
          refused.length === 0 ? null : Math.max(1, Math.ceil((w.start + windowMs - t) / 1000)),
      });
    },
  };
}
