import { unitVector, type IndexedLesson } from "./lessons-for-task-rank.js";
import { WordRarity, wordsOf } from "./task-words.js";

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
 */

/** One stored lesson as Postgres gives it to the index (vectors of this process's embedder only). */
export interface LessonVectorRow {
  id: string;
  projectId: string;
  strategyText: string | null;
  learning: string;
  adjustments: string[];
  tags: string[];
  importance: number;
  effectiveQuality: number;
  createdAt: Date;
  lastSeenAt: Date;
  updatedAt: Date;
  /**
   * The vector a task is compared with: the trace's the lesson was written for, or the lesson
   * text's when no trace vector was stored (lessons older than trace matching).
   */
  vector: number[];
  /** Tasks that applied the lesson (carried or retrieved) and succeeded, or failed the same way again. */
  applied?: { helped: number; failedAgain: number };
  /** The task the lesson was written for (description and goal); null when no longer stored. */
  task?: string | null;
  /** Failures filed under the lesson (its first included). */
  occurrences?: number;
  /** An operator approved it for wide serving (`POST /api/v1/reflections/{id}/approve`). */
  approved?: boolean;
}

/** Where the index reads lessons from; implemented by `src/adapters/postgres/pg-lesson-store.ts`. */
export interface LessonVectorSource {
  /** The tenant's lessons with vectors of `embeddingModel`: how many, and the latest change. */
  lessonVersion(tenantId: string, embeddingModel: string): Promise<{ count: number; latest: Date | null }>;
  /** Those lessons changed at or after `since` (all of them when null). */
  lessonVectors(tenantId: string, embeddingModel: string, since: Date | null): Promise<LessonVectorRow[]>;
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
}

interface TenantLessons {
  lessons: Map<string, IndexedLesson>;
  /** How many of these lessons' tasks have each word. */
  rarity: WordRarity;
  latest: Date | null;
  checkedAt: number;
  loaded: boolean;
  refreshing: Promise<void> | null;
  /** Why the last refresh failed; null once one succeeds. */
  failure: Error | null;
}

/** How far back a refresh reads before the latest change it has seen. */
const overlapMs = 5_000;

function indexed(row: LessonVectorRow): IndexedLesson | null {
  const vector = unitVector(row.vector);
  if (!vector) return null;
  return {
    id: row.id,
    projectId: row.projectId,
    strategyText: row.strategyText,
    learning: row.learning,
    adjustments: row.adjustments,
    tags: row.tags,
    importance: row.importance,
    effectiveQuality: row.effectiveQuality,
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt,
    applied: row.applied ?? { helped: 0, failedAgain: 0 },
    ...(row.occurrences !== undefined ? { occurrences: row.occurrences } : {}),
    ...(row.approved ? { approved: true } : {}),
    vector,
    ...(row.task ? { taskWords: wordsOf(row.task) } : {}),
  };
}

function put(entry: TenantLessons, id: string, lesson: IndexedLesson | null): void {
  const old = entry.lessons.get(id);
  if (old?.taskWords?.length) entry.rarity.remove(old.taskWords);
  if (!lesson) {
    entry.lessons.delete(id);
    return;
  }
  entry.lessons.set(id, lesson);
  if (lesson.taskWords?.length) entry.rarity.add(lesson.taskWords);
}

function latestOf(rows: readonly LessonVectorRow[], since: Date | null): Date | null {
  let latest = since;
  for (const row of rows) if (!latest || row.updatedAt > latest) latest = row.updatedAt;
  return latest;
}

export function createLessonIndex(options: LessonIndexOptions) {
  const { source, embeddingModel, clock } = options;
  const refreshMs = options.refreshMs ?? 1_000;
  const maxTenants = options.maxTenants ?? 64;
  const maxStaleMs = options.maxStaleMs ?? 60_000;
  const tenants = new Map<string, TenantLessons>();

  async function load(tenantId: string, entry: TenantLessons, full: boolean): Promise<void> {
    const since = full ? null : entry.latest;
    // A change committed late by a transaction that began earlier carries an earlier time: the
    // overlap reads it again (rows are replaced by id, so twice is harmless).
    const from = since ? new Date(since.getTime() - overlapMs) : null;
    const rows = await source.lessonVectors(tenantId, embeddingModel, from);
    if (full) {
      entry.lessons = new Map();
      entry.rarity = new WordRarity();
    }
    // A row with no usable vector cannot match a task; it still counts, so it is not reloaded.
    for (const row of rows) put(entry, row.id, indexed(row));
    entry.latest = latestOf(rows, since);
  }

  async function refresh(tenantId: string, entry: TenantLessons): Promise<void> {
    const version = await source.lessonVersion(tenantId, embeddingModel);
    const moved = (version.latest?.getTime() ?? 0) !== (entry.latest?.getTime() ?? 0);
    if (moved) await load(tenantId, entry, false);
    // Rows that left (pruned, deleted) do not show in `updated_at`: the count tells.
    if (version.count !== entry.lessons.size) await load(tenantId, entry, true);
  }

  function remember(tenantId: string, entry: TenantLessons): void {
    tenants.delete(tenantId);
    tenants.set(tenantId, entry);
    while (tenants.size > maxTenants) {
      const oldest = tenants.keys().next().value;
      if (oldest === undefined) break;
      tenants.delete(oldest);
    }
  }

  function start(tenantId: string, entry: TenantLessons): void {
    const work = entry.loaded ? refresh(tenantId, entry) : load(tenantId, entry, true);
    entry.refreshing = work
      .then(
        () => {
          entry.loaded = true;
          entry.checkedAt = clock.now().getTime();
          entry.failure = null;
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
    async lessonsOf(tenantId: string): Promise<Iterable<IndexedLesson>> {
      const entry = tenants.get(tenantId) ?? {
        lessons: new Map<string, IndexedLesson>(),
        rarity: new WordRarity(),
        latest: null,
        checkedAt: 0,
        loaded: false,
        refreshing: null,
        failure: null,
      };
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
      // Iterable more than once (a map's `values()` is not): the model check ranks them twice.
      const lessons = entry.lessons;
      return { [Symbol.iterator]: () => lessons.values() };
    },
    /** How rare each word is among the tenant's lessons' tasks, as held (after `lessonsOf`). */
    rarityOf(tenantId: string): WordRarity {
      return tenants.get(tenantId)?.rarity ?? new WordRarity();
    },
    /** Resolves when the tenant's refresh under way (if any) has ended (tests, the benchmark). */
    async settled(tenantId: string): Promise<void> {
      await tenants.get(tenantId)?.refreshing;
    },
    /** Tenants held and their lessons (for tests and the benchmark). */
    size(): { tenants: number; lessons: number } {
      let lessons = 0;
      for (const t of tenants.values()) lessons += t.lessons.size;
      return { tenants: tenants.size, lessons };
    },
  };
}

export type LessonIndex = ReturnType<typeof createLessonIndex>;
