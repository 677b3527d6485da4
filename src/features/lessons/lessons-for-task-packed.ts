import type { IndexedLesson } from "./lessons-for-task-rank.js";

/**
 * A tenant's held lessons with their vectors packed row after row in blocks of one typed array
 * each, so that a pass over them reads memory in order and allocates nothing. A lesson's `vector`
 * is a view of its row. Rows are stable while a lesson is held (a coarse index can name them); a
 * row let go is reused by the next lesson put.
 *
 * Vectors of another length than the first one held (another embedder's, which the index never
 * reads for one model) are kept on the lesson alone and listed apart (`others`).
 */

/**
 * The product of a unit query and one packed row, summed in the same order as the exact pass's
 * (`dot` in lessons-for-task-rank.ts), so that both give the same cosines to the last bit.
 */
export function dotRow(q: Float32Array, block: Float32Array, start: number, dims: number): number {
  let sum = 0;
  let i = 0;
  for (; i + 4 <= dims; i += 4) {
    const at = start + i;
    sum += (q[i] ?? 0) * (block[at] ?? 0);
    sum += (q[i + 1] ?? 0) * (block[at + 1] ?? 0);
    sum += (q[i + 2] ?? 0) * (block[at + 2] ?? 0);
    sum += (q[i + 3] ?? 0) * (block[at + 3] ?? 0);
  }
  for (; i < dims; i += 1) sum += (q[i] ?? 0) * (block[start + i] ?? 0);
  return sum;
}

/** What a missing block reads as (never, while rows are held). */
export const emptyBlock = new Float32Array(0);

/** Rows per block: blocks are allocated as rows are needed, and never moved. */
export const blockRows = 1024;

export class PackedLessons implements Iterable<IndexedLesson> {
  /** The vectors' length (0 until the first lesson). */
  dims = 0;
  readonly blocks: Float32Array[] = [];
  /** The lesson of each row; null for a row let go. */
  readonly rows: (IndexedLesson | null)[] = [];
  /** Lessons whose vector is not `dims` long. */
  readonly others = new Map<string, IndexedLesson>();
  private readonly rowOfId = new Map<string, number>();
  private readonly free: number[] = [];
  /** The largest effective quality ever held (never lowered): a ceiling for a pass's bounds. */
  maxQuality = 0;
  /** Told when a row takes a lesson, or lets one go (the coarse index). */
  onRow: ((row: number, lesson: IndexedLesson | null) => void) | null = null;

  get size(): number {
    return this.rowOfId.size + this.others.size;
  }

  get(id: string): IndexedLesson | undefined {
    const row = this.rowOfId.get(id);
    return row === undefined ? this.others.get(id) : (this.rows[row] ?? undefined);
  }

  rowOf(id: string): number | undefined {
    return this.rowOfId.get(id);
  }

  /** Holds `lesson` in place of the lesson of the same id, if any; its vector becomes a row's view. */
  set(lesson: IndexedLesson): void {
    this.delete(lesson.id);
    if (lesson.effectiveQuality > this.maxQuality) this.maxQuality = lesson.effectiveQuality;
    if (this.dims === 0) this.dims = lesson.vector.length;
    if (lesson.vector.length !== this.dims || this.dims === 0) {
      this.others.set(lesson.id, lesson);
      return;
    }
    const row = this.free.pop() ?? this.rows.length;
    if (row === this.rows.length) this.rows.push(null);
    const block = row >> 10;
    if (block === 0) this.growFirst(row + 1);
    while (this.blocks.length <= block) this.blocks.push(new Float32Array(blockRows * this.dims));
    const start = (row & (blockRows - 1)) * this.dims;
    const view = (this.blocks[block] ?? emptyBlock).subarray(start, start + this.dims);
    view.set(lesson.vector);
    lesson.vector = view;
    this.rows[row] = lesson;
    this.rowOfId.set(lesson.id, row);
    this.onRow?.(row, lesson);
  }

  /**
   * The first block grows with the tenant (16 rows, doubling up to `blockRows`), so that a small
   * tenant does not take a whole block; its lessons' views move with it.
   */
  private growFirst(rows: number): void {
    const first = this.blocks[0];
    const had = first ? first.length / this.dims : 0;
    if (had >= rows) return;
    let size = Math.max(16, had * 2);
    while (size < rows) size *= 2;
    const grown = new Float32Array(Math.min(blockRows, size) * this.dims);
    if (first) grown.set(first);
    this.blocks[0] = grown;
    for (let row = 0; row < had; row += 1) {
      const lesson = this.rows[row];
      if (lesson) lesson.vector = grown.subarray(row * this.dims, (row + 1) * this.dims);
    }
  }

  /**
   * Lets the lesson go. Its row may soon hold another lesson: the lesson let go keeps an empty
   * vector, which matches no task, rather than a view of that row (no copy: a large tenant's
   * load lets tens of thousands go at once).
   */
  delete(id: string): boolean {
    if (this.others.delete(id)) return true;
    const row = this.rowOfId.get(id);
    if (row === undefined) return false;
    const lesson = this.rows[row];
    if (lesson) lesson.vector = emptyBlock;
    this.rows[row] = null;
    this.rowOfId.delete(id);
    this.free.push(row);
    this.onRow?.(row, null);
    return true;
  }

  values(): IterableIterator<IndexedLesson> {
    return this.iterate();
  }

  [Symbol.iterator](): IterableIterator<IndexedLesson> {
    return this.iterate();
  }

  private *iterate(): IterableIterator<IndexedLesson> {
    for (const lesson of this.rows) if (lesson) yield lesson;
    yield* this.others.values();
  }
}
