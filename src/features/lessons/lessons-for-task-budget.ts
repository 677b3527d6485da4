import { isServed } from "../../domain/feedback/effective-quality.js";
import type { IndexedLesson } from "./lessons-for-task-rank.js";

/**
 * What the lessons-for-task index holds in bytes, estimated, and which lessons it keeps when one
 * tenant alone is larger than its share (`LESSONS_INDEX_MAX_BYTES`, docs/api.md "Where the vectors
 * live").
 *
 * The estimate counts what a held lesson keeps alive on the heap: its vector (the typed array and
 * its buffer), every string it carries (one byte a character for Latin-1 text, two otherwise, plus
 * V8's header) and a fixed share for the object, its dates, arrays and map entry. It was checked
 * against the heap measured around a tenant's first load (`bench/lessons-for-task-scale.ts` prints
 * both): with 480 bytes for that share the heap was 16 % (10,000 lessons) and 44 % (100,000, of
 * which 40,000 held) above the estimate, so the share is 880. The table of word rarity is not counted: it is bounded by the vocabulary, not by lessons.
 */

/** A V8 string's header and the pointer that holds it. */
const perString = 24;
/** A Float32Array with its own ArrayBuffer, beyond its data. */
const perVector = 160;
/**
 * The lesson object (about 18 fields), its two dates, the `applied` object, the three arrays and
 * its entry in the tenant's map.
 */
const perLesson = 880;
const twoByte = /[\u0100-\uffff]/;

function stringBytes(s: string | null | undefined): number {
  if (!s) return 0;
  return perString + s.length * (twoByte.test(s) ? 2 : 1);
}

function stringsBytes(xs: readonly string[] | undefined): number {
  let sum = 0;
  for (const s of xs ?? []) sum += stringBytes(s);
  return sum;
}

/** The estimated heap one held lesson keeps alive. */
export function lessonBytes(lesson: IndexedLesson): number {
  return (
    perLesson +
    perVector +
    lesson.vector.byteLength +
    stringBytes(lesson.id) +
    stringBytes(lesson.projectId) +
    stringBytes(lesson.strategyText) +
    // Often the same text as the strategy (then one string, counted once).
    (lesson.learning === lesson.strategyText ? 0 : stringBytes(lesson.learning)) +
    stringsBytes(lesson.adjustments) +
    stringsBytes(lesson.tags) +
    stringsBytes(lesson.taskWords)
  );
}

/**
 * The estimated heap of remembering that a lesson exists without holding it: its fingerprint in
 * the tenant's `CompactIdSet` (8 bytes in a table kept at most half full).
 */
export const idBytes = 16;

/**
 * Which of two lessons is worth more to hold, when not all of a tenant's fit: a lesson that can be
 * served (withheld ones never are) before one that cannot, then by importance × effective quality
 * (what the ranking and the default `minImportance` favour), then the more recently seen, then by
 * id (a stable order). Negative when `a` is worth more.
 */
export function byValue(a: IndexedLesson, b: IndexedLesson): number {
  const servedA = isServed(a.effectiveQuality);
  const servedB = isServed(b.effectiveQuality);
  if (servedA !== servedB) return servedA ? -1 : 1;
  const va = a.importance * a.effectiveQuality;
  const vb = b.importance * b.effectiveQuality;
  if (va !== vb) return vb - va;
  const seen = b.lastSeenAt.getTime() - a.lastSeenAt.getTime();
  if (seen !== 0) return seen;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
