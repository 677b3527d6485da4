import { dotRow, emptyBlock, type PackedLessons } from "./lessons-for-task-packed.js";

/**
 * A coarse index of a large tenant's packed lessons: k-means centroids (spherical: unit length,
 * about √n of them) and, for each, the rows nearest it, with the widest angle between a member and
 * the centroid. A task's vector is compared with the centroids, and only the lessons of the
 * nearest clusters are looked at (`rankCoarse`); the widest angle bounds what any member can score,
 * so that the pass knows when no lesson left can enter the answer.
 *
 * Built in the background after a tenant's load (in slices, so that queries are answered between
 * them; the exact pass answers until it is ready), then kept as lessons change: a lesson put is
 * placed in its nearest cluster at once, a lesson let go leaves its cluster.
 */

/** MACs (products) done between two yields to the event loop while building (a few ms). */
const sliceWork = 4_000_000;
/** Rounds of k-means over the sample. */
const rounds = 6;
/** Rows sampled per centroid to fit the centroids (the rest are only placed). */
const samplePerCentroid = 24;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class CoarseIndex {
  readonly k: number;
  /** The rows of each cluster. */
  readonly members: number[][];
  /** The smallest cosine between a member and its centroid (never raised when one leaves). */
  readonly minCos: Float64Array;
  private readonly clusterOf: number[] = [];
  private readonly memberAt: number[] = [];

  constructor(
    readonly held: PackedLessons,
    /** Unit centroids, row after row. */
    readonly centroids: Float32Array,
    /** Lessons held when it was built. */
    readonly builtFor: number,
  ) {
    this.k = centroids.length / held.dims;
    this.members = Array.from({ length: this.k }, () => []);
    this.minCos = new Float64Array(this.k).fill(1);
  }

  /** The cluster whose centroid is nearest the row's vector, and their cosine. */
  private nearestCentroid(row: number): { cluster: number; cos: number } {
    const { held } = this;
    const dims = held.dims;
    const vector = (held.blocks[row >> 10] ?? emptyBlock).subarray(
      (row & 1023) * dims,
      ((row & 1023) + 1) * dims,
    );
    let cluster = 0;
    let cos = -Infinity;
    for (let c = 0; c < this.k; c += 1) {
      const s = dotRow(vector, this.centroids, c * dims, dims);
      if (s > cos) {
        cos = s;
        cluster = c;
      }
    }
    return { cluster, cos };
  }

  has(row: number): boolean {
    return (this.clusterOf[row] ?? -1) >= 0;
  }

  /**
   * Estimated heap bytes: the centroids and each cluster's widest angle, and for every row placed
   * its cluster, its place in the cluster and its entry in the member list (numbers in arrays,
   * 8 bytes each).
   */
  bytes(): number {
    return this.centroids.byteLength + this.minCos.byteLength + 24 * this.clusterOf.length;
  }

  /** Puts a held row in its nearest cluster (taking it out of any it was in). */
  place(row: number): void {
    this.unplace(row);
    const { cluster, cos } = this.nearestCentroid(row);
    const members = this.members[cluster] ?? [];
    this.clusterOf[row] = cluster;
    this.memberAt[row] = members.length;
    members.push(row);
    if (cos < (this.minCos[cluster] ?? 1)) this.minCos[cluster] = cos;
  }

  /** Takes a row out of its cluster (a lesson let go). */
  unplace(row: number): void {
    const cluster = this.clusterOf[row] ?? -1;
    if (cluster < 0) return;
    const members = this.members[cluster] ?? [];
    const at = this.memberAt[row] ?? 0;
    const moved = members.pop() ?? row;
    if (moved !== row) {
      members[at] = moved;
      this.memberAt[moved] = at;
    }
    this.clusterOf[row] = -1;
  }

  /**
   * The non-empty clusters, best first, each with the highest cosine any member can have with
   * `q` (unit length): cos(max(0, angle to the centroid − the cluster's widest angle)).
   */
  nearest(q: Float32Array): { cluster: number; bound: number }[] {
    const dims = this.held.dims;
    const out: { cluster: number; bound: number }[] = [];
    for (let c = 0; c < this.k; c += 1) {
      if ((this.members[c] ?? []).length === 0) continue;
      const s = Math.min(1, Math.max(-1, dotRow(q, this.centroids, c * dims, dims)));
      const widest = Math.acos(Math.min(1, Math.max(-1, this.minCos[c] ?? 1)));
      // A little over the exact bound: the cosines are sums of rounded products.
      out.push({ cluster: c, bound: Math.cos(Math.max(0, Math.acos(s) - widest)) + 1e-6 });
    }
    return out.sort((a, b) => b.bound - a.bound);
  }
}

/** The rows that hold a lesson now. */
function liveRows(held: PackedLessons): number[] {
  const rows: number[] = [];
  held.rows.forEach((lesson, row) => {
    if (lesson) rows.push(row);
  });
  return rows;
}

/** Spherical k-means over a sample of the rows: `k` unit centroids. */
async function fitCentroids(held: PackedLessons, sample: number[], k: number, still: () => boolean) {
  const dims = held.dims;
  const centroids = new Float32Array(k * dims);
  const seedRow = (c: number) => sample[Math.floor((c * sample.length) / k)] ?? 0;
  const copyRow = (c: number, row: number) => {
    const start = (row & 1023) * dims;
    centroids.set((held.blocks[row >> 10] ?? emptyBlock).subarray(start, start + dims), c * dims);
  };
  for (let c = 0; c < k; c += 1) copyRow(c, seedRow(c));
  const sums = new Float64Array(k * dims);
  const counts = new Uint32Array(k);
  for (let round = 0; round < rounds; round += 1) {
    sums.fill(0);
    counts.fill(0);
    let work = 0;
    for (const row of sample) {
      if (!held.rows[row]) continue;
      const block = held.blocks[row >> 10] ?? emptyBlock;
      const start = (row & 1023) * dims;
      const vector = block.subarray(start, start + dims);
      let best = 0;
      let bestCos = -Infinity;
      for (let c = 0; c < k; c += 1) {
        const s = dotRow(vector, centroids, c * dims, dims);
        if (s > bestCos) {
          bestCos = s;
          best = c;
        }
      }
      counts[best] = (counts[best] ?? 0) + 1;
      for (let i = 0; i < dims; i += 1)
        sums[best * dims + i] = (sums[best * dims + i] ?? 0) + (block[start + i] ?? 0);
      work += k * dims;
      if (work >= sliceWork) {
        work = 0;
        await nextTurn();
        if (!still()) return null;
      }
    }
    for (let c = 0; c < k; c += 1) {
      let norm = 0;
      for (let i = 0; i < dims; i += 1) norm += (sums[c * dims + i] ?? 0) ** 2;
      // An empty cluster starts again from a sampled row.
      if (counts[c] === 0 || !(norm > 0)) copyRow(c, seedRow((c * 7 + round + 1) % k));
      else
        for (let i = 0; i < dims; i += 1)
          centroids[c * dims + i] = (sums[c * dims + i] ?? 0) / Math.sqrt(norm);
    }
  }
  return centroids;
}

/**
 * Builds a coarse index of the held lessons, yielding to the event loop between slices; null when
 * `still()` turns false meanwhile (the tenant was read again or dropped). Lessons put or let go
 * while it builds are placed as they come (`held.onRow`).
 */
export async function buildCoarse(held: PackedLessons, still: () => boolean): Promise<CoarseIndex | null> {
  const rows = liveRows(held);
  if (rows.length === 0 || held.dims === 0) return null;
  const k = Math.min(1024, Math.max(16, Math.round(Math.sqrt(rows.length))));
  const take = Math.min(rows.length, k * samplePerCentroid);
  const sample = Array.from({ length: take }, (_, i) => rows[Math.floor((i * rows.length) / take)] ?? 0);
  const centroids = await fitCentroids(held, sample, k, still);
  if (!centroids || !still()) return null;
  const coarse = new CoarseIndex(held, centroids, rows.length);
  // From now on a row put or let go is placed at once, in this index and in the one it replaces.
  const previous = held.onRow;
  held.onRow = (row, lesson) => {
    previous?.(row, lesson);
    if (lesson) coarse.place(row);
    else coarse.unplace(row);
  };
  let work = 0;
  for (let row = 0; row < held.rows.length; row += 1) {
    if (!held.rows[row] || coarse.has(row)) continue;
    coarse.place(row);
    work += k * held.dims;
    if (work >= sliceWork) {
      work = 0;
      await nextTurn();
      if (!still()) return null;
    }
  }
  held.onRow = (row, lesson) => {
    if (lesson) coarse.place(row);
    else coarse.unplace(row);
  };
  return coarse;
}
