import { byValue, idBytes, lessonBytes } from "./lessons-for-task-budget.js";
import { CompactIdSet } from "./lessons-for-task-id-set.js";
import { buildCoarse, type CoarseIndex } from "./lessons-for-task-coarse.js";
import { PackedLessons } from "./lessons-for-task-packed.js";
import {
  unitVector,
  type IndexedLesson,
  type RankedLesson,
  type ServedLesson,
  type SimilarityScale,
  type TaskQuery,
} from "./lessons-for-task-rank.js";
import { rankCoarse, rankPacked } from "./lessons-for-task-search.js";
import { WordRarity, wordsOf } from "./task-words.js";

/**
 * What the lessons index (lessons-for-task-index.ts) holds of one tenant, and how rows from
 * Postgres become held lessons, within the tenant's bytes.
 */

/** One stored lesson as Postgres gives it to the index (vectors of this process's embedder only). */
export interface LessonVectorRow extends ServedLesson {
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

/** What is held of a tenant's lessons. */
export interface Held {
  lessons: PackedLessons;
  /** The coarse index of a large tenant's lessons, once built; null: the exact pass. */
  coarse: CoarseIndex | null;
  /** Lessons the tenant has (with vectors) that are not held: over its share of the budget. */
  notHeld: CompactIdSet;
  /** Estimated bytes of `lessons` and `notHeld`. */
  bytes: number;
  /** How many of these lessons' tasks have each word. */
  rarity: WordRarity;
}

export const emptyHeld = (): Held => ({
  lessons: new PackedLessons(),
  coarse: null,
  notHeld: new CompactIdSet(),
  bytes: 0,
  rarity: new WordRarity(),
});

export interface TenantLessons extends Held {
  /** A coarse index being built for `lessons`, until it ends. */
  building: Promise<void> | null;
  latest: Date | null;
  checkedAt: number;
  loaded: boolean;
  refreshing: Promise<void> | null;
  /** Why the last refresh failed; null once one succeeds. */
  failure: Error | null;
}

/** Rows read from the source at once. */
const pageRows = 5_000;

/** How far back a refresh reads before the latest change it has seen. */
export const overlapMs = 5_000;

export function indexedLesson(row: LessonVectorRow): IndexedLesson | null {
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

export function put(entry: Held, id: string, lesson: IndexedLesson | null): void {
  const old = entry.lessons.get(id);
  if (old) {
    entry.bytes -= lessonBytes(old);
    if (old.taskWords?.length) entry.rarity.remove(old.taskWords);
  }
  if (entry.notHeld.delete(id)) entry.bytes -= idBytes;
  if (!lesson) {
    entry.lessons.delete(id);
    return;
  }
  entry.lessons.set(lesson);
  entry.bytes += lessonBytes(lesson);
  if (lesson.taskWords?.length) entry.rarity.add(lesson.taskWords);
}

/**
 * Keeps the tenant within `maxBytes`: its least valuable lessons (`byValue`) are let go and known
 * by id only. A row with no usable vector is not a lesson held, nor one let go.
 */
export function trim(entry: Held, maxBytes: number): void {
  if (entry.bytes <= maxBytes) return;
  const worst = [...entry.lessons.values()].sort(byValue).reverse();
  for (const lesson of worst) {
    if (entry.bytes <= maxBytes) break;
    put(entry, lesson.id, null);
    entry.notHeld.add(lesson.id);
    entry.bytes += idBytes;
  }
}

export function latestOf(rows: readonly LessonVectorRow[], since: Date | null): Date | null {
  let latest = since;
  for (const row of rows) if (!latest || row.updatedAt > latest) latest = row.updatedAt;
  return latest;
}

/** The rows changed at or after `from` (all when null), handed to `each` a page at a time. */
export async function readPages(
  read: (page: { afterId: string | null; limit: number }) => Promise<LessonVectorRow[]>,
  each: (rows: LessonVectorRow[]) => void,
): Promise<void> {
  let afterId: string | null = null;
  for (;;) {
    const rows = await read({ afterId, limit: pageRows });
    each(rows);
    const last = rows.at(-1);
    // A short page is the last; so is one that does not move on (a source that reads no pages).
    if (rows.length !== pageRows || !last || (afterId !== null && last.id <= afterId)) return;
    afterId = last.id;
  }
}

export function newTenant(): TenantLessons {
  return {
    ...emptyHeld(),
    building: null,
    latest: null,
    checkedAt: 0,
    loaded: false,
    refreshing: null,
    failure: null,
  };
}

/**
 * Starts building a coarse index of a large tenant's lessons in the background (from
 * `minLessons` held), when it has none for what it holds now, or holds twice what the one it has
 * was built for. Abandoned when the tenant is read again in full (other lessons) or no longer
 * `remembered`.
 */
export function indexInBackground(entry: TenantLessons, minLessons: number, remembered: () => boolean): void {
  const held = entry.lessons;
  if (entry.building !== null || held.size < minLessons) return;
  if (entry.coarse?.held === held && held.size < 2 * entry.coarse.builtFor) return;
  const still = () => entry.lessons === held && remembered();
  entry.building = buildCoarse(held, still)
    .then((built) => {
      if (built && still()) entry.coarse = built;
    })
    .catch(() => undefined)
    .finally(() => {
      entry.building = null;
    });
}

/** A tenant's lessons as held, and their ranking: the exact pass, or over the coarse index. */
export interface HeldLessons extends Iterable<IndexedLesson> {
  rank(
    query: TaskQuery,
    scale: SimilarityScale | undefined,
    admit?: (lesson: IndexedLesson) => boolean,
  ): RankedLesson[];
}

/** The tenant's lessons as held now, iterable more than once (the model check ranks them twice). */
export function heldLessons(entry: TenantLessons, scanRows: number): HeldLessons {
  const lessons = entry.lessons;
  return {
    [Symbol.iterator]: () => lessons.values(),
    rank: (query, scale, admit) => {
      const built = entry.coarse;
      return built?.held === lessons
        ? rankCoarse(lessons, built, query, scale, scanRows, admit)
        : rankPacked(lessons, query, scale, admit);
    },
  };
}
