import type { CoarseIndex } from "./lessons-for-task-coarse.js";
import { dotRow, emptyBlock, type PackedLessons } from "./lessons-for-task-packed.js";
import {
  admitted,
  dot,
  offer,
  rankingWeights,
  relevanceOf,
  startPass,
  type IndexedLesson,
  type RankedLesson,
  type RankPass,
  type SimilarityScale,
  type TaskQuery,
} from "./lessons-for-task-rank.js";

/**
 * The ranking of `lessons-for-task-rank.ts` over a tenant's packed lessons: every lesson held
 * (the exact pass), or, for a tenant with a coarse index, the lessons of the clusters nearest the
 * task. Each lesson looked at is held to every rule of the exact pass (withheld, importance,
 * project, tags, floor, shared rare words) and scored the same way.
 */

/**
 * No score exceeds relevance × this: the best quality factor any held lesson can have (recency's
 * is at most 1).
 */
export function scoreCeiling(held: PackedLessons): number {
  const w = rankingWeights;
  return 1 - w.quality + w.quality * Math.max(1, held.maxQuality);
}

/**
 * Looks at one packed row: its cosine first; a lesson below the floor, or whose score could not
 * reach the last one kept (`least`, with the pass full), is not looked at further.
 */
function lookAt(
  pass: RankPass,
  held: PackedLessons,
  row: number,
  scale: SimilarityScale | undefined,
  ceiling: number,
): void {
  const lesson = held.rows[row];
  if (!lesson) return;
  const block = held.blocks[row >> 10] ?? emptyBlock;
  const relevance = relevanceOf(dotRow(pass.query.vector, block, (row & 1023) * held.dims, held.dims), scale);
  if (relevance < pass.query.floor || relevance <= 0) return;
  const least = pass.kept.length >= pass.query.limit ? pass.kept[pass.kept.length - 1] : undefined;
  if (least && relevance * ceiling < least.score) return;
  if (admitted(pass, lesson)) offer(pass, lesson, relevance);
}

/** Lessons held apart (another vector length): looked at as the plain pass does. */
function lookAtOthers(pass: RankPass, held: PackedLessons, scale: SimilarityScale | undefined): void {
  const q = pass.query.vector;
  for (const lesson of held.others.values())
    if (lesson.vector.length === q.length && admitted(pass, lesson))
      offer(pass, lesson, relevanceOf(dot(q, lesson.vector), scale));
}

/** The exact pass over every held lesson: the same answer as `rankLessons`. */
export function rankPacked(
  held: PackedLessons,
  query: TaskQuery,
  scale: SimilarityScale | undefined,
  admit?: (lesson: IndexedLesson) => boolean,
): RankedLesson[] {
  const pass = startPass(query, admit);
  if (query.vector.length === held.dims) {
    const rows = held.rows.length;
    const ceiling = scoreCeiling(held);
    for (let row = 0; row < rows; row += 1) lookAt(pass, held, row, scale, ceiling);
  }
  lookAtOthers(pass, held, scale);
  return pass.kept;
}

/**
 * The coarse pass: clusters in order of the best cosine any of their lessons can have with the
 * task (from the centroid's and the cluster's widest angle), looked at until no lesson left can
 * enter the answer (then the answer is the exact pass's) or until `scanRows` lessons were looked at
 * (then it is approximate: the bench measures how often it differs).
 */
export function rankCoarse(
  held: PackedLessons,
  coarse: CoarseIndex,
  query: TaskQuery,
  scale: SimilarityScale | undefined,
  scanRows: number,
  admit?: (lesson: IndexedLesson) => boolean,
): RankedLesson[] & { scanned?: number; exact?: boolean } {
  const pass = startPass(query, admit);
  const ceiling = scoreCeiling(held);
  let scanned = 0;
  let exact = true;
  for (const { cluster, bound } of coarse.nearest(query.vector)) {
    const most = relevanceOf(bound, scale);
    if (most < query.floor || most <= 0) break;
    const last = pass.kept[query.limit - 1];
    if (last && last.score > most * ceiling) break;
    if (scanned >= scanRows) {
      exact = false;
      break;
    }
    const members = coarse.members[cluster] ?? [];
    for (const row of members) lookAt(pass, held, row, scale, ceiling);
    scanned += members.length;
  }
  lookAtOthers(pass, held, scale);
  return Object.assign(pass.kept, { scanned, exact });
}
