import {
  emptyHeld,
  indexInBackground,
  latestOf,
  newTenant,
  overlapMs,
  heldLessons,
  indexedLesson,
  put,
  readPages,
  trim,
  type HeldLessons,
  type LessonVectorRow,
  type TenantLessons,
} from "./lessons-for-task-held.js";
import { WordRarity } from "./task-words.js";

export type { HeldLessons, LessonVectorRow };

/**
 * The tenants' lessons with their vectors, in this process: loaded once per tenant and kept fresh
 * by the rows' `updated_at`, so that answering a task costs one embedding and one pass over the
 * tenant's vectors, not a read of every vector from Postgres.
 *
 * Freshness: when a tenant's lessons are older than `refreshMs`, a query starts a refresh in the
 * background: it asks Postgres for the tenant's lesson count and latest `updated_at`; when either
 * moved it reads the rows changed since, and reads them all again when the count still differs (a
 * lesson was deleted or merged away). Feedback, merges and new lessons are thus served about
 * `refreshMs` plus one refresh late; queries never wait on it.
 *
 * Bounds: at most `maxTenants` tenants and `maxBytes` of estimated heap (lessons-for-task-budget.ts);
 * beyond either, the least recently asked tenants are dropped (and loaded again when next asked).
 * One tenant alone holds at most half of `maxBytes`: beyond that, its most valuable lessons are held
 * and the rest are known by id only, never served, and reported (`onNotHeld`, `size().notHeld`).
 *
 * Ranking: a tenant's vectors are packed row after row (lessons-for-task-packed.ts) and ranked by
 * one exact pass; a tenant holding `coarse.minLessons` or more also gets a coarse index
 * (lessons-for-task-coarse.ts), built in the background after its load, and is then ranked over
 * the clusters nearest the task, at most about `coarse.scanRows` lessons a query.
 */

/** Where the index reads lessons from; implemented by `src/adapters/postgres/pg-lesson-store.ts`. */
export interface LessonVectorSource {
  /** The tenant's lessons with vectors of `embeddingModel`: how many, and the latest change. */
  lessonVersion(tenantId: string, embeddingModel: string): Promise<{ count: number; latest: Date | null }>;
  /**
   * Those lessons changed at or after `since` (all of them when null); with `page`, at most
   * `limit` of them in order of id, after `afterId` (the index reads a tenant a page at a time, so
   * that a large tenant's rows are never all in memory at once).
   */
  lessonVectors(
    tenantId: string,
    embeddingModel: string,
    since: Date | null,
    page?: { afterId: string | null; limit: number },
  ): Promise<LessonVectorRow[]>;
}

export interface LessonIndexOptions {
  source: LessonVectorSource;
  embeddingModel: string;
  clock: { now(): Date };
  /** How stale a tenant's lessons may be before a query checks Postgres (default 1 s). */
  refreshMs?: number;
  /** Tenants kept in memory; the least recently asked one is dropped beyond it (default 64). */
  maxTenants?: number;
  /** While refreshes fail, lessons this old are still served (default 60 s); older, the query fails. */
  maxStaleMs?: number;
  /**
   * Estimated bytes all tenants' lessons may take (LESSONS_INDEX_MAX_BYTES, default
   * `defaultIndexMaxBytes`); least recently asked tenants are dropped beyond it, and one tenant
   * alone holds at most half of it.
   */
  maxBytes?: number;
  /**
   * Told when a load leaves some of a tenant's lessons not held (the tenant alone is over half of
   * `maxBytes`): on every full load that does, and when an update first does.
   */
  onNotHeld?: (event: { tenantId: string; held: number; notHeld: number; bytes: number }) => void;
  /** When a tenant is ranked over a coarse index instead of every lesson (defaults: `coarseDefaults`). */
  coarse?: Partial<CoarseSettings>;
}

export interface CoarseSettings {
  /** Lessons held from which a tenant gets a coarse index (LESSONS_INDEX_COARSE_MIN_LESSONS). */
  minLessons: number;
  /**
   * Lessons a coarse pass looks at before it answers with the best found: it stops at the first
   * cluster that would start past this many (LESSONS_INDEX_COARSE_SCAN_ROWS).
   */
  scanRows: number;
}

/**
 * From 20,000 lessons the exact pass costs about 10 ms of CPU a query or more (about 0.5 µs a
 * lesson); looking at 4,000 lessons kept 0.999 of the exact pass's top 5 at 100,000 noisy
 * lessons, for about 4 ms against 59 (`npm run bench -- lessons-for-task-scale`, ADR 0017).
 */
export const coarseDefaults: CoarseSettings = { minLessons: 20_000, scanRows: 4_000 };

/**
 * 200 MiB: the chart's pod limit is 1 GiB and the processor's peak RSS under a 1,000,000-event
 * backlog is 734 MiB (`npm run bench -- rss`), which leaves about 290 MiB; 200 MiB of lessons is
 * about 70,000 lessons of 384 dimensions (about 3 KB each as estimated; `bench/lessons-for-task-scale.ts`
 * measures the heap against the estimate).
 */
export const defaultIndexMaxBytes = 200 * 1024 * 1024;

export function createLessonIndex(options: LessonIndexOptions) {
  const { source, embeddingModel, clock } = options;
  const refreshMs = options.refreshMs ?? 1_000;
  const maxTenants = options.maxTenants ?? 64;
  const maxStaleMs = options.maxStaleMs ?? 60_000;
  const maxBytes = options.maxBytes ?? defaultIndexMaxBytes;
  const tenantMaxBytes = Math.floor(maxBytes / 2);
  const tenants = new Map<string, TenantLessons>();
  const coarse: CoarseSettings = { ...coarseDefaults, ...options.coarse };

  async function load(tenantId: string, entry: TenantLessons, full: boolean): Promise<void> {
    const since = full ? null : entry.latest;
    // A change committed late by a transaction that began earlier carries an earlier time: the
    // overlap reads it again (rows are replaced by id, so twice is harmless).
    const from = since ? new Date(since.getTime() - overlapMs) : null;
    const wasNotHeld = entry.notHeld.size;
    // A full read is built apart and put in place at once: queries meanwhile see the old lessons.
    const target = full ? emptyHeld() : entry;
    let latest = since;
    const read = (page: { afterId: string | null; limit: number }) =>
      source.lessonVectors(tenantId, embeddingModel, from, page);
    await readPages(read, (rows) => {
      // A row with no usable vector cannot match a task; it still counts, so it is not reloaded.
      for (const row of rows) {
        put(target, row.id, indexedLesson(row));
        // Trimmed as it grows, so that a tenant far over its share never holds all of it at once.
        if (target.bytes > tenantMaxBytes * 1.25) trim(target, tenantMaxBytes);
      }
      latest = latestOf(rows, latest);
    });
    trim(target, tenantMaxBytes);
    if (full) Object.assign(entry, target);
    entry.latest = latest;
    if (entry.notHeld.size > 0 && (full || wasNotHeld === 0))
      options.onNotHeld?.({
        tenantId,
        held: entry.lessons.size,
        notHeld: entry.notHeld.size,
        bytes: entry.bytes,
      });
  }

  async function refresh(tenantId: string, entry: TenantLessons): Promise<void> {
    const version = await source.lessonVersion(tenantId, embeddingModel);
    const moved = (version.latest?.getTime() ?? 0) !== (entry.latest?.getTime() ?? 0);
    if (moved) await load(tenantId, entry, false);
    // Rows that left (pruned, deleted) do not show in `updated_at`: the count tells.
    if (version.count !== entry.lessons.size + entry.notHeld.size) await load(tenantId, entry, true);
  }

  function bytesHeld(): number {
    let bytes = 0;
    // A large tenant's coarse index counts too (built after its load, it is not in `t.bytes`).
    for (const t of tenants.values()) bytes += t.bytes + (t.coarse?.bytes() ?? 0);
    return bytes;
  }

  /** Drops the least recently asked tenants (never `keep`) while over either bound. */
  function bound(keep: string): void {
    let bytes = bytesHeld();
    for (const [id, entry] of tenants) {
      if (tenants.size <= maxTenants && bytes <= maxBytes) break;
      if (id === keep) continue;
      tenants.delete(id);
      bytes -= entry.bytes + (entry.coarse?.bytes() ?? 0);
    }
  }

  function remember(tenantId: string, entry: TenantLessons): void {
    tenants.delete(tenantId);
    tenants.set(tenantId, entry);
    bound(tenantId);
  }

  function start(tenantId: string, entry: TenantLessons): void {
    const work = entry.loaded ? refresh(tenantId, entry) : load(tenantId, entry, true);
    entry.refreshing = work
      .then(
        () => {
          entry.loaded = true;
          entry.checkedAt = clock.now().getTime();
          entry.failure = null;
          // Held again only while still remembered (a tenant dropped meanwhile stays dropped).
          if (tenants.get(tenantId) === entry) {
            bound(tenantId);
            indexInBackground(entry, coarse.minLessons, () => tenants.get(tenantId) === entry);
          }
        },
        (err: unknown) => {
          entry.failure = err instanceof Error ? err : new Error(String(err));
        },
      )
      .finally(() => {
        entry.refreshing = null;
      });
  }

  return {
    /**
     * The tenant's lessons. The first query of a tenant waits for them to load; after that a query
     * never waits for Postgres: when the lessons are older than `refreshMs` it starts a refresh
     * (one per tenant at a time) and answers from what is held. While refreshes fail, lessons are
     * served up to `maxStaleMs` old, then the failure is the caller's error.
     */
    async lessonsOf(tenantId: string): Promise<HeldLessons> {
      const entry = tenants.get(tenantId) ?? newTenant();
      remember(tenantId, entry);
      const now = clock.now().getTime();
      if (!entry.refreshing && (!entry.loaded || now - entry.checkedAt >= refreshMs)) start(tenantId, entry);
      if (!entry.loaded) {
        await entry.refreshing;
        const failure = entry.failure;
        if (failure) {
          tenants.delete(tenantId);
          throw failure;
        }
      } else if (entry.failure !== null && now - entry.checkedAt > maxStaleMs) throw entry.failure;
      return heldLessons(entry, coarse.scanRows);
    },
    /** How rare each word is among the tenant's lessons' tasks, as held (after `lessonsOf`). */
    rarityOf(tenantId: string): WordRarity {
      return tenants.get(tenantId)?.rarity ?? new WordRarity();
    },
    /** Whether the tenant is ranked over a coarse index, once any being built is (tests, the benchmark). */
    async coarseBuilt(tenantId: string): Promise<boolean> {
      await tenants.get(tenantId)?.building;
      const entry = tenants.get(tenantId);
      return entry?.coarse?.held !== undefined && entry.coarse.held === entry.lessons;
    },
    /** Resolves when the tenant's refresh under way (if any) has ended (tests, the benchmark). */
    async settled(tenantId: string): Promise<void> {
      await tenants.get(tenantId)?.refreshing;
    },
    /**
     * Tenants held, their lessons held, those known but not held (tenants over their share of the
     * bytes) and the estimated bytes (the metrics, tests and the benchmark).
     */
    size(): { tenants: number; lessons: number; notHeld: number; bytes: number } {
      let lessons = 0;
      let notHeld = 0;
      for (const t of tenants.values()) {
        lessons += t.lessons.size;
        notHeld += t.notHeld.size;
      }
      return { tenants: tenants.size, lessons, notHeld, bytes: bytesHeld() };
    },
  };
}

export type LessonIndex = ReturnType<typeof createLessonIndex>;
