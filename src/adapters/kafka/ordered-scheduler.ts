import { loopFamilyRoot } from "../../domain/guardrails/loop-family.js";
/**
 * Concurrency inside one partition, ordered per key (the idea of Confluent's Parallel Consumer in
 * KEY mode): entries with different keys run at once, entries with the same key strictly one after
 * the other in offset order, and only the contiguous completed prefix may be committed. Pure: no
 * Kafka, no timers, so it is unit-tested on its own.
 */
interface Entry<T, R> {
  readonly offset: string;
  readonly key: string | null;
  readonly item: T;
  state: "waiting" | "running" | "done";
  result: R | undefined;
}

export interface Runnable<T> {
  offset: string;
  /** Its ordering key (null: ordered by nothing). */
  key: string | null;
  item: T;
}

export interface CommitPrefix<T, R> {
  /** The offset to commit: the last entry's offset + 1 (Kafka commits the next offset to read). */
  nextOffset: string;
  entries: { offset: string; item: T; result: R }[];
}

export class PartitionScheduler<T, R> {
  /** The entries not yet committed, after at most as many committed ones (let go in bulk). */
  private readonly entries: Entry<T, R>[] = [];
  /** Index of the first entry not yet committed. */
  private head = 0;
  /** The last offset added (entries may all have been let go). */
  private lastAdded: bigint | null = null;
  private readonly byKey = new Map<string, Entry<T, R>[]>();
  private readonly ready: Entry<T, R>[] = [];
  private running = 0;

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError("limit must be a positive integer");
  }

  /** Adds the next entry of the partition; offsets must be added in increasing order. */
  add(offset: string, key: string | null, item: T): void {
    const at = BigInt(offset);
    if (this.lastAdded !== null && at <= this.lastAdded) {
      throw new RangeError(`offset ${offset} is not after ${this.lastAdded.toString()}`);
    }
    this.lastAdded = at;
    const entry: Entry<T, R> = { offset, key, item, state: "waiting", result: undefined };
    this.entries.push(entry);
    if (key === null) {
      this.ready.push(entry);
      return;
    }
    const queue = this.byKey.get(key);
    if (queue) queue.push(entry);
    else {
      this.byKey.set(key, [entry]);
      this.ready.push(entry);
    }
  }

  /** True when `next()` would return an entry. */
  hasRunnable(): boolean {
    return this.ready.length > 0 && this.running < this.limit;
  }

  /**
   * The next entry that may start now (head of its key, under the limit, and accepted by
   * `canStart` — a gate shared with other partitions), marked running.
   */
  next(canStart: (item: T) => boolean = () => true): Runnable<T> | null {
    if (!this.hasRunnable()) return null;
    const index = this.ready.findIndex((candidate) => canStart(candidate.item));
    if (index < 0) return null;
    const [entry] = this.ready.splice(index, 1);
    if (!entry) return null;
    entry.state = "running";
    this.running += 1;
    return { offset: entry.offset, key: entry.key, item: entry.item };
  }

  /** Marks a running entry done; the next entry of its key becomes runnable. */
  complete(offset: string, result: R): void {
    const entry = this.find(offset);
    if (entry?.state !== "running") throw new Error(`offset ${offset} is not running`);
    entry.state = "done";
    entry.result = result;
    this.running -= 1;
    if (entry.key === null) return;
    const queue = this.byKey.get(entry.key);
    if (queue?.[0] !== entry) throw new Error(`offset ${offset} was not the head of its key`);
    queue.shift();
    const following = queue.at(0);
    if (following) this.ready.push(following);
    else this.byKey.delete(entry.key);
  }

  /**
   * Settles without running them the ready entries that `settle` gives a result for (undefined
   * leaves an entry be), whatever the limit: each is done at once with that result, in its place
   * in the partition's order, and the next entry of its key is offered in turn. Returns how many.
   */
  settle(settle: (item: T, key: string | null) => R | undefined): number {
    let settled = 0;
    for (let i = 0; i < this.ready.length;) {
      const entry = this.ready[i];
      const result = entry ? settle(entry.item, entry.key) : undefined;
      if (!entry || result === undefined) {
        i += 1;
        continue;
      }
      this.ready.splice(i, 1);
      entry.state = "running";
      this.running += 1;
      this.complete(entry.offset, result);
      settled += 1;
    }
    return settled;
  }

  /** The completed entries from the last commit up to the first one not done; null when none. */
  committable(): CommitPrefix<T, R> | null {
    const prefix: CommitPrefix<T, R>["entries"] = [];
    for (let i = this.head; i < this.entries.length; i += 1) {
      const entry = this.entries[i];
      if (entry?.state !== "done") break;
      prefix.push({ offset: entry.offset, item: entry.item, result: entry.result as R });
    }
    const last = prefix.at(-1);
    if (!last) return null;
    return { nextOffset: (BigInt(last.offset) + 1n).toString(), entries: prefix };
  }

  /** Records that the prefix returned by `committable()` (of `count` entries) is committed. */
  markCommitted(count: number): void {
    for (let i = 0; i < count; i += 1) {
      if (this.entries[this.head]?.state !== "done") throw new Error("committing an entry that is not done");
      this.head += 1;
    }
    // Committed entries are let go (their records, events and outputs with them) once they are
    // half of the array: a partition that runs for days holds only what it has not committed.
    if (this.head >= 64 && this.head * 2 >= this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Entries held in memory: the uncommitted ones and committed ones not yet let go. */
  get held(): number {
    return this.entries.length;
  }

  get inFlight(): number {
    return this.running;
  }

  /** Entries added and not yet committed. */
  get pending(): number {
    return this.entries.length - this.head;
  }

  private find(offset: string): Entry<T, R> | undefined {
    // Offsets increase, so a binary search over the uncommitted part finds the entry.
    let lo = this.head;
    let hi = this.entries.length - 1;
    const target = BigInt(offset);
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const entry = this.entries[mid];
      if (!entry) return undefined;
      const here = BigInt(entry.offset);
      if (here === target) return entry;
      if (here < target) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}

/** A counting limit shared by every partition (the global in-flight limit). */
export class SlotPool {
  private used = 0;
  private readonly listeners = new Set<() => void>();

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError("size must be a positive integer");
  }

  tryAcquire(): boolean {
    if (this.used >= this.size) return false;
    this.used += 1;
    return true;
  }

  release(): void {
    if (this.used === 0) throw new Error("release without acquire");
    this.used -= 1;
    for (const listener of [...this.listeners]) listener();
  }

  get inUse(): number {
    return this.used;
  }

  /** Calls `listener` on every release until the returned function is called. */
  onRelease(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * The ordering key of a task event: its loop family (tenant + root loop id), so a rerun
 * (`<root>_r<n>`, `rerunOf` naming its parent) is decided after the loops it descends from.
 * The root is `loopFamilyRoot`'s, as decideLoop derives it when the parent's trace is not known.
 */
export function loopFamilyKey(event: {
  tenantId: string;
  loopId: string;
  rerunOf?: string | undefined;
}): string {
  return `${event.tenantId}\u0000${loopFamilyRoot(event)}`;
}
