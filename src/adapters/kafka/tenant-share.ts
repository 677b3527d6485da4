/**
 * Each tenant's share of the events one instance processes at once (`CONSUMER_MAX_IN_FLIGHT_PER_TENANT`):
 * a tenant with `limit` events in flight starts no more until one of them ends, whatever partition
 * or topic they came from, so one tenant's backlog never holds every slot. A limit of 0 shares
 * nothing (every tenant may take every slot). Pure: no Kafka, no timers.
 */
export class TenantShare {
  private readonly running = new Map<string, number>();
  private readonly lastDeferred = new Map<string, number>();

  constructor(
    readonly limit: number,
    private readonly windowMs = 30_000,
  ) {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError("limit must be a non-negative integer");
  }

  /** True when the tenant holds its whole share; never for an unknown tenant or with no share. */
  atShare(tenant: string | null): boolean {
    if (this.limit === 0 || tenant === null) return false;
    return (this.running.get(tenant) ?? 0) >= this.limit;
  }

  started(tenant: string | null): void {
    if (tenant === null) return;
    this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
  }

  finished(tenant: string | null): void {
    if (tenant === null) return;
    const count = this.running.get(tenant) ?? 0;
    if (count === 0) throw new Error("finished without started");
    if (count === 1) this.running.delete(tenant);
    else this.running.set(tenant, count - 1);
  }

  /**
   * Records that the tenant's events are being handed to the retry topic: for `windowMs` after the
   * last one, `deferring` says so, and its new input events follow them there rather than start
   * where they are (where each would hold up the commit of every later event of its partition).
   */
  deferred(tenant: string, now: number): void {
    this.lastDeferred.delete(tenant);
    this.lastDeferred.set(tenant, now);
    // Bounded: tenants that stopped deferring long ago are forgotten (the oldest first).
    for (const [name, at] of this.lastDeferred) {
      if (this.lastDeferred.size <= 10_000 && now - at < this.windowMs) break;
      this.lastDeferred.delete(name);
    }
  }

  deferring(tenant: string | null, now: number): boolean {
    if (this.limit === 0 || tenant === null) return false;
    const at = this.lastDeferred.get(tenant);
    return at !== undefined && now - at < this.windowMs;
  }

  /** The tenant's events in flight. */
  inFlight(tenant: string): number {
    return this.running.get(tenant) ?? 0;
  }
}

/**
 * The loop families (ordering keys) whose events were handed to the retry topic for their
 * tenant's share, most recent last: a later event of such a family follows it there, so that a
 * family's events are not decided out of order while its deferred ones wait. Bounded: the oldest
 * families are forgotten past `capacity`.
 */
export class DeferredFamilies {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError("capacity must be a positive integer");
  }

  add(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }
}
