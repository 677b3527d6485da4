import { describe, expect, it } from "vitest";
import {
  createLessonIndex,
  type LessonVectorRow,
  type LessonVectorSource,
} from "../../../src/features/lessons/lessons-for-task-index.js";
import { PackedLessons } from "../../../src/features/lessons/lessons-for-task-packed.js";
import {
  rankLessons,
  unitVector,
  type TaskQuery,
} from "../../../src/features/lessons/lessons-for-task-rank.js";
import { rankPacked } from "../../../src/features/lessons/lessons-for-task-search.js";
import { wordsOf } from "../../../src/features/lessons/task-words.js";
import { indexedLesson, lessonRow, lessonsNow } from "../../support/lessons.js";

const dims = 48;
const centres = 24;

/** A deterministic pseudo-random number in [-1, 1) from two integers. */
const noise = (i: number, k: number) => {
  const x = Math.sin(i * 12.9898 + k * 78.233) * 43758.5453;
  return 2 * (x - Math.floor(x)) - 1;
};

/** A vector near centre `c`, jittered by `i` (lessons of one kind of task, worded differently). */
const near = (c: number, i: number, spread = 0.35) =>
  Array.from({ length: dims }, (_, k) => noise(c + 1000, k) + spread * noise(i, k));

const topics = ["refund", "booking", "invoice", "deploy", "migration", "upgrade"];

/** `n` lessons around the centres, with projects, tags, importance, quality and task words varied. */
function rowsOf(n: number): LessonVectorRow[] {
  return Array.from({ length: n }, (_, i) =>
    lessonRow(`l-${String(i).padStart(5, "0")}`, near(i % centres, i), {
      projectId: `p${String(i % 3)}`,
      tags: i % 4 === 0 ? ["billing"] : [],
      importance: 0.3 + (i % 7) / 10,
      effectiveQuality: 0.2 + (i % 9) / 10,
      lastSeenAt: new Date(lessonsNow.getTime() - (i % 50) * 86_400_000),
      task: `help with the ${topics[i % topics.length] ?? ""} of order ${String(i % 40)}`,
    }),
  );
}

/** A source over mutable rows (the index reads what they are when it asks). */
function sourceOf(rows: LessonVectorRow[]): LessonVectorSource {
  return {
    lessonVersion: () =>
      Promise.resolve({
        count: rows.length,
        latest: rows.reduce<Date | null>((m, r) => (!m || r.updatedAt > m ? r.updatedAt : m), null),
      }),
    lessonVectors: (_tenant, _model, since) =>
      Promise.resolve(rows.filter((r) => since === null || r.updatedAt >= since)),
  };
}

function queryOf(i: number, over: Partial<TaskQuery> = {}): TaskQuery {
  return {
    vector: unitVector(near(i % centres, 50_000 + i, 0.5)) ?? new Float32Array(),
    limit: 5,
    minImportance: 0.5,
    floor: 0.2,
    now: lessonsNow,
    ...over,
  };
}

const scale = { unrelated: 0.1, related: 0.6 };
const ids = (ranked: { lesson: { id: string } }[]) => ranked.map((r) => r.lesson.id);

async function indexOf(rows: LessonVectorRow[], coarse: { minLessons: number; scanRows: number }) {
  let now = lessonsNow.getTime();
  const index = createLessonIndex({
    source: sourceOf(rows),
    embeddingModel: "m",
    clock: { now: () => new Date(now) },
    refreshMs: 1_000,
    coarse,
  });
  await index.lessonsOf("t");
  const coarseBuilt = await index.coarseBuilt("t");
  /** The lessons after a refresh (`refreshMs` later) has read the source again. */
  const refreshed = async () => {
    now += 2_000;
    await index.lessonsOf("t");
    await index.settled("t");
    await index.coarseBuilt("t");
    return index.lessonsOf("t");
  };
  return { index, coarseBuilt, refreshed };
}

describe("the packed exact pass", () => {
  it("ranks as the plain pass does, filters, floor and shared words included", () => {
    const rows = rowsOf(600);
    const packed = new PackedLessons();
    const plain = rows.map(({ vector, updatedAt: _u, task, ...r }) =>
      indexedLesson(r.id, vector, { ...r, taskWords: wordsOf(task ?? "") }),
    );
    for (const l of plain) packed.set({ ...l });
    for (let i = 0; i < 40; i += 1) {
      const query = queryOf(i, {
        ...(i % 3 === 0 ? { projectId: "p1" } : {}),
        ...(i % 5 === 0 ? { tags: ["billing"] } : {}),
      });
      expect(ids(rankPacked(packed, query, scale))).toEqual(ids(rankLessons(plain, query, scale)));
    }
  });

  it("reuses a row let go, and the lesson let go no longer reads it", () => {
    const packed = new PackedLessons();
    const a = indexedLesson("a", near(1, 1));
    packed.set(a);
    packed.delete("a");
    const b = indexedLesson("b", near(2, 2));
    packed.set(b);
    expect(packed.rowOf("b")).toBe(0);
    expect(a.vector).toHaveLength(0);
    expect(
      rankLessons([a, b], queryOf(2, { floor: 0, minImportance: 0 }), scale).map((r) => r.lesson.id),
    ).toEqual(["b"]);
    expect([...packed].map((l) => l.id)).toEqual(["b"]);
  });
});

describe("the packed vectors' memory", () => {
  it("gives a small tenant a small block, growing it with the tenant and its lessons' views with it", () => {
    const packed = new PackedLessons();
    for (let i = 0; i < 5; i += 1) packed.set(indexedLesson(`s${String(i)}`, near(i, i)));
    expect(packed.blocks[0]?.length).toBe(16 * dims);
    for (let i = 5; i < 40; i += 1) packed.set(indexedLesson(`s${String(i)}`, near(i, i)));
    expect(packed.blocks[0]?.length).toBe(64 * dims);
    const first = packed.get("s0");
    expect(first?.vector.buffer).toBe(packed.blocks[0]?.buffer);
    expect([...(first?.vector ?? [])]).toEqual([...(unitVector(near(0, 0)) ?? [])]);
  });
});

describe("the coarse index of a large tenant", () => {
  it("answers as the exact pass does when it may look at every cluster it cannot rule out", async () => {
    const rows = rowsOf(3_000);
    const { index, coarseBuilt } = await indexOf(rows, { minLessons: 1_000, scanRows: 1_000_000 });
    expect(coarseBuilt).toBe(true);
    const held = await index.lessonsOf("t");
    for (let i = 0; i < 60; i += 1) {
      const query = queryOf(i, {
        ...(i % 4 === 1 ? { projectId: "p2" } : {}),
        words: { task: new Set(wordsOf(`refund order ${String(i % 40)}`)), rarity: index.rarityOf("t") },
      });
      expect(ids(held.rank(query, scale))).toEqual(ids(rankLessons([...held], query, scale)));
    }
  });

  it("finds nearly all of the exact pass's lessons while looking at a fraction of them", async () => {
    const rows = rowsOf(3_000);
    const { index } = await indexOf(rows, { minLessons: 1_000, scanRows: 400 });
    const held = await index.lessonsOf("t");
    let found = 0;
    let wanted = 0;
    for (let i = 0; i < 60; i += 1) {
      const exact = new Set(ids(rankLessons([...held], queryOf(i), scale)));
      wanted += exact.size;
      found += ids(held.rank(queryOf(i), scale)).filter((id) => exact.has(id)).length;
    }
    expect(wanted).toBeGreaterThan(200);
    expect(found / wanted).toBeGreaterThan(0.9);
  });

  it("serves a lesson added or changed after it was built, and no longer one deleted", async () => {
    const rows = rowsOf(2_000);
    const { index, refreshed } = await indexOf(rows, { minLessons: 1_000, scanRows: 400 });
    const query = queryOf(7, { minImportance: 0 });
    const later = new Date(lessonsNow.getTime() + 60_000);
    // A new lesson exactly on the task, and an old one moved onto it.
    rows.push(lessonRow("new", [...query.vector], { updatedAt: later }));
    const moved = rows[5] ?? rowsOf(1)[0];
    if (!moved) throw new Error("no row 5");
    rows[5] = { ...moved, vector: [...query.vector].map((v, k) => v + 0.01 * noise(9, k)), updatedAt: later };
    let top = ids((await refreshed()).rank(query, scale)).slice(0, 2);
    expect(index.size().lessons).toBe(2_001);
    expect(await index.coarseBuilt("t")).toBe(true);
    expect(top.sort()).toEqual(["l-00005", "new"]);
    // Deleted: the count falls, the tenant is read again in full.
    rows.splice(rows.length - 1, 1);
    top = ids((await refreshed()).rank(query, scale));
    expect(top).not.toContain("new");
    expect(top[0]).toBe("l-00005");
  });

  it("counts its own memory in the index's bytes (the byte budget holds it too)", async () => {
    const rows = rowsOf(2_000);
    const plain = await indexOf(rows, { minLessons: 1_000_000, scanRows: 4_000 });
    const coarse = await indexOf(rows, { minLessons: 1_000, scanRows: 4_000 });
    expect(plain.coarseBuilt).toBe(false);
    expect(coarse.coarseBuilt).toBe(true);
    const extra = coarse.index.size().bytes - plain.index.size().bytes;
    // At least the centroids (about √2,000 of them, 4 bytes a dimension) and a place for each row.
    const dims = rows[0]?.vector.length ?? 0;
    expect(extra).toBeGreaterThanOrEqual(40 * dims * 4 + 2_000 * 8);
  });
});
