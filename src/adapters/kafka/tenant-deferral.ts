import type { EventRunner } from "./event-runner.js";
import type { PartitionScheduler } from "./ordered-scheduler.js";
import type { RunningEvents } from "./running-events.js";
import type { DeferredFamilies, TenantShare } from "./tenant-share.js";
import type { Done, Work } from "./work.js";

/** What the deferral sees of a partition's run (batch-pump.ts). */
export interface DeferralPartition {
  topic: string;
  scheduler: PartitionScheduler<Work, Done>;
  running: RunningEvents;
}

/** What the deferral sees of the pump: the tenants' shares, the families deferred, the bound. */
export interface DeferralShared {
  runner: Pick<EventRunner, "defer">;
  retryTopic: string;
  tenants: TenantShare;
  deferredFamilies: DeferredFamilies;
  handOverAfterMs: number;
}

export const tenantOf = (work: Work): string | null => work.event?.tenantId ?? null;

/**
 * On an input topic, hands the ready events of tenants at their share to the retry topic, and
 * those of a tenant whose events went there in the last 30 s (so that a flooding tenant's events
 * stop starting where they would hold up the commits of other tenants' later events), and every
 * later event of a loop family that went there (to keep the family in order). Each is settled at
 * once, in its place in the partition's order, and commits with the prefix. Events too large for
 * the retry topic stay, to wait for their tenant's turn.
 */
export function deferOverShare(run: DeferralPartition, shared: DeferralShared): void {
  const { tenants, deferredFamilies, runner } = shared;
  if (tenants.limit === 0 || run.topic === shared.retryTopic) return;
  const now = Date.now();
  run.scheduler.settle((work, key) => {
    const tenant = tenantOf(work);
    const follows = key !== null && deferredFamilies.has(key);
    // Over its share now, or lately: the tenant is (still) being deferred.
    const overShare = tenants.atShare(tenant) || tenants.deferring(tenant, now);
    if (!follows && !overShare) return undefined;
    const done = runner.defer(work);
    if (!done) return undefined;
    if (key !== null) deferredFamilies.add(key);
    if (overShare && tenant !== null) tenants.deferred(tenant, now);
    return done;
  });
}

/**
 * On an input topic, hands to the retry topic the events of tenants being deferred that have run
 * `handOverAfterMs` or longer: a flooding tenant's events that started before it reached its share
 * would otherwise hold every later event of their partitions, another tenant's too, for as long as
 * they run. Each is settled with its deferred copy in its place in the partition's order; its run is
 * told to stop and whatever it ends with is ignored (the copy is processed again from the retry
 * topic, as the same record: `sourceOf` in event-runner.ts). Returns how long until the next
 * running event would be due (Infinity when none would).
 */
export function handOverSlow(run: DeferralPartition, shared: DeferralShared): number {
  const { tenants, deferredFamilies, runner } = shared;
  if (tenants.limit === 0 || shared.handOverAfterMs <= 0 || run.topic === shared.retryTopic)
    return Number.POSITIVE_INFINITY;
  const now = Date.now();
  const deferring = (work: Work) => {
    const tenant = tenantOf(work);
    return tenants.atShare(tenant) || tenants.deferring(tenant, now);
  };
  const { due, nextInMs } = run.running.overdue(now, shared.handOverAfterMs, deferring);
  for (const event of due) {
    const done = runner.defer(event.work);
    if (!done) continue;
    event.stop.abort();
    run.scheduler.complete(event.offset, done);
    if (event.key !== null) deferredFamilies.add(event.key);
    const tenant = tenantOf(event.work);
    if (tenant !== null) tenants.deferred(tenant, now);
  }
  return nextInMs;
}
