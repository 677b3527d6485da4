import { isServed } from "../../domain/feedback/effective-quality.js";
import type { WordRarity } from "./task-words.js";

/**
 * Which stored lessons apply to a task an agent is about to do, and in what order: by meaning
 * first (the task's vector against the vectors a lesson is known by), then by how good the lesson
 * is (its effective quality) and how recently it was seen. Pure: the index and the embedder are
 * the caller's.
 */

/** What a stored lesson serves and is ranked by, as Postgres gives it and as the index keeps it. */
export interface ServedLesson {
  id: string;
  projectId: string;
  strategyText: string | null;
  learning: string;
  adjustments: string[];
  tags: string[];
  importance: number;
  /** The judged score after feedback (and, once counted, applied outcomes). */
  effectiveQuality: number;
  createdAt: Date;
  lastSeenAt: Date;
}

/** A stored lesson as the in-process index keeps it: the served text and its unit vectors. */
export interface IndexedLesson extends ServedLesson {
  /** Tasks that applied the lesson and succeeded, or failed the same way again (applied-outcome.ts). */
  applied?: { helped: number; failedAgain: number };
  /** Failures filed under the lesson (its first included); absent counts as one. */
  occurrences?: number;
  /** An operator approved it for wide serving, whatever its occurrences. */
  approved?: boolean;
  /**
   * The unit vector a task is compared with: the trace the lesson was written for (its task,
   * failing step and error), which says what kind of task it applies to; the lesson's own text
   * only when no trace vector was stored (lessons older than trace matching). Measured on real
   * traces (`npm run bench -- lessons-for-task`), the lesson's text matched new tasks worse: it
   * speaks of the fix, the task speaks of the work.
   */
  vector: Float32Array;
  /**
   * The words of the task the lesson was written for (`wordsOf`); absent or empty when unknown
   * (lessons whose source task is no longer stored), and then not required to share any.
   */
  taskWords?: readonly string[];
}

export interface TaskQuery {
  /** The task's vector, unit length, by the same embedder as the lessons'. */
  vector: Float32Array;
  projectId?: string | undefined;
  /** Only lessons carrying every one of these tags; absent or empty: any. */
  tags?: readonly string[] | undefined;
  limit: number;
  minImportance: number;
  /** Relevance (0–1, `relevanceOf`) below which a lesson is not returned at all. */
  floor: number;
  now: Date;
  /**
   * The task's words and the tenant's word rarity: a lesson whose task words are known is served
   * only when the two tasks share enough rare words (task-words.ts). Absent: meaning alone.
   */
  words?: { task: ReadonlySet<string>; rarity: WordRarity; minNats?: number };
}

export interface RankedLesson {
  lesson: IndexedLesson;
  /** Calibrated similarity of meaning, 0–1: 0 is what unrelated texts typically score, 1 related ones. */
  relevance: number;
  /** What the order is by: relevance weighted by quality and recency. */
  score: number;
}

/** Typical cosines of unrelated and of related texts under the embedder (its `similarityScale`). */
export interface SimilarityScale {
  unrelated: number;
  related: number;
}

/** How much quality and recency move a lesson against another of the same relevance. */
export const rankingWeights = {
  /** score × (1 − quality + quality × effectiveQuality): a 0.5-quality lesson keeps 80 % of a perfect one's. */
  quality: 0.4,
  /** score × (1 − recency + recency × 2^(−age / half-life)). */
  recency: 0.2,
  recencyHalfLifeDays: 90,
};

const dayMs = 86_400_000;

export function unitVector(values: readonly number[]): Float32Array | null {
  let norm = 0;
  for (const v of values) norm += v * v;
  if (!(norm > 0) || !Number.isFinite(norm)) return null;
  const scale = 1 / Math.sqrt(norm);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i += 1) out[i] = (values[i] ?? 0) * scale;
  return out;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/**
 * A cosine as relevance, 0–1: 0 at the embedder's typical similarity of unrelated texts (its
 * `similarityScale.unrelated`), 1 for the same text. Anchored on the unrelated level only, so
 * that closely related texts are still told apart (the related level is a typical value, not a
 * ceiling).
 */
export function relevanceOf(cosine: number, scale: SimilarityScale | undefined): number {
  const unrelated = scale?.unrelated ?? 0;
  return Math.min(1, Math.max(0, (cosine - unrelated) / (1 - unrelated)));
}

export function rankLessons(
  lessons: Iterable<IndexedLesson>,
  query: TaskQuery,
  scale: SimilarityScale | undefined,
): RankedLesson[] {
  const pass = startPass(query);
  for (const lesson of lessons) {
    if (lesson.vector.length !== query.vector.length || !admitted(pass, lesson)) continue;
    offer(pass, lesson, relevanceOf(dot(query.vector, lesson.vector), scale));
  }
  return pass.kept;
}

/** One ranking under way: the query, the best lessons so far, and what every lesson is held to. */
export interface RankPass {
  query: TaskQuery;
  kept: RankedLesson[];
  now: number;
  minShared: number;
  /** A further condition the caller puts on lessons (e.g. occurrences); absent: none. */
  admit: ((lesson: IndexedLesson) => boolean) | undefined;
}

export function startPass(query: TaskQuery, admit?: (lesson: IndexedLesson) => boolean): RankPass {
  const words = query.words;
  return {
    query,
    kept: [],
    now: query.now.getTime(),
    minShared: words?.rarity.minShared(words.minNats) ?? 0,
    admit,
  };
}

/** Whether the lesson may be served for this query at all, its meaning aside. */
export function admitted(pass: RankPass, lesson: IndexedLesson): boolean {
  const query = pass.query;
  // Withheld lessons (feedback or outcomes took them below the serving floor) are never advice.
  if (!isServed(lesson.effectiveQuality)) return false;
  if (lesson.importance < query.minImportance) return false;
  if (query.projectId !== undefined && lesson.projectId !== query.projectId) return false;
  if (query.tags?.some((tag) => !lesson.tags.includes(tag))) return false;
  return pass.admit === undefined || pass.admit(lesson);
}

/** Keeps an admitted lesson of this relevance among the best, when above the floor and sharing enough words. */
export function offer(pass: RankPass, lesson: IndexedLesson, relevance: number): void {
  const { query } = pass;
  if (relevance < query.floor || relevance <= 0) return;
  const words = query.words;
  // Near in meaning, but about another request of the same domain: no rare word in common.
  if (words && lesson.taskWords?.length && words.rarity.shared(words.task, lesson.taskWords) < pass.minShared)
    return;
  const w = rankingWeights;
  const ageDays = Math.max(0, (pass.now - lesson.lastSeenAt.getTime()) / dayMs);
  const recency = 2 ** (-ageDays / w.recencyHalfLifeDays);
  const score =
    relevance * (1 - w.quality + w.quality * lesson.effectiveQuality) * (1 - w.recency + w.recency * recency);
  insertTop(pass.kept, { lesson, relevance, score }, query.limit);
}

const before = (a: RankedLesson, b: RankedLesson) =>
  a.score > b.score ||
  (a.score === b.score &&
    (a.relevance > b.relevance || (a.relevance === b.relevance && a.lesson.id < b.lesson.id)));

/** Keeps the best `limit` in order (limit ≤ 50: an insertion beats sorting thousands of candidates). */
function insertTop(top: RankedLesson[], item: RankedLesson, limit: number): void {
  const last = top[top.length - 1];
  if (top.length >= limit && last && !before(item, last)) return;
  let i = top.length;
  for (let prev = top[i - 1]; prev && before(item, prev); prev = top[i - 1]) i -= 1;
  top.splice(i, 0, item);
  if (top.length > limit) top.pop();
}

/** The text a task is embedded as: what the agent will do, its goal and the tools it will use. */
export function taskQueryText(input: {
  task: string;
  goal?: string | undefined;
  tools?: readonly string[] | undefined;
}) {
  const parts = [input.task.trim()];
  if (input.goal?.trim()) parts.push(input.goal.trim());
  if (input.tools && input.tools.length > 0) parts.push(`tools: ${input.tools.join(", ")}`);
  return parts.join("\n");
}
