import { describe, expect, it } from "vitest";
import { lessonBytes } from "../../../src/features/lessons/lessons-for-task-budget.js";
import {
  createLessonIndex,
  type LessonVectorRow,
  type LessonVectorSource,
} from "../../../src/features/lessons/lessons-for-task-index.js";
import { indexedLesson, lessonRow, lessonsNow } from "../../support/lessons.js";

const dims = 384;

function vectorOf(i: number): number[] {
  return Array.from({ length: dims }, (_, k) => Math.sin(i * 31 + k));
}

/** `n` lessons of one tenant, ids `<tenant>-<i>`. */
function rowsOf(tenant: string, n: number, over: (i: number) => Partial<LessonVectorRow> = () => ({})) {
  return Array.from({ length: n }, (_, i) => lessonRow(`${tenant}-${String(i)}`, vectorOf(i), over(i)));
}

/** A source holding each tenant's rows, counting full reads per tenant. */
function fakeSource(byTenant: Map<string, LessonVectorRow[]>) {
  const fullReads = new Map<string, number>();
  const source: LessonVectorSource = {
    lessonVersion: (tenant) => {
      const rows = byTenant.get(tenant) ?? [];
      const latest = rows.reduce<Date | null>((m, r) => (!m || r.updatedAt > m ? r.updatedAt : m), null);
      return Promise.resolve({ count: rows.length, latest });
    },
    lessonVectors: (tenant, _model, since) => {
      if (since === null) fullReads.set(tenant, (fullReads.get(tenant) ?? 0) + 1);
      const rows = byTenant.get(tenant) ?? [];
      return Promise.resolve(rows.filter((r) => since === null || r.updatedAt >= since));
    },
  };
  return { source, fullReads };
}

/** The estimated bytes of one lesson as `rowsOf` builds it. */
const oneLesson = lessonBytes(indexedLesson("t0-0", vectorOf(0)));

describe("the lessons index's byte budget", () => {
  it("estimates a lesson by its vector and texts", () => {
    const small = lessonBytes(indexedLesson("a", vectorOf(1), { strategyText: "x" }));
    const long = lessonBytes(indexedLesson("a", vectorOf(1), { strategyText: "x".repeat(1001) }));
    expect(long - small).toBe(1000);
    const wide = lessonBytes(indexedLesson("a", vectorOf(1), { strategyText: "ł".repeat(1001) }));
    expect(long).toBeLessThan(wide);
    expect(small).toBeGreaterThan(dims * 4);
  });

  it("drops the least recently asked tenants while the bytes are over, and loads one again when asked", async () => {
    const data = new Map(["a", "b", "c"].map((t) => [t, rowsOf(t, 10)]));
    const fake = fakeSource(data);
    // Room for two tenants of 10 lessons, not three.
    const index = createLessonIndex({
      source: fake.source,
      embeddingModel: "m",
      clock: { now: () => lessonsNow },
      maxBytes: oneLesson * 25,
    });
    await index.lessonsOf("a");
    await index.lessonsOf("b");
    await index.lessonsOf("a");
    await index.lessonsOf("c");
    // b was asked least recently: dropped; a and c held.
    expect(index.size()).toMatchObject({ tenants: 2, lessons: 20, notHeld: 0 });
    expect(index.size().bytes).toBeLessThanOrEqual(oneLesson * 25);
    expect([...(await index.lessonsOf("b"))]).toHaveLength(10);
    expect(fake.fullReads.get("b")).toBe(2);
    expect(fake.fullReads.get("a")).toBe(1);
  });

  it("spends a large tenant's share on lessons it can serve, not on the ids of those it cannot", async () => {
    // 20,000 lessons against a share with room for about 200 of them and 40 bytes an id not held.
    const vectors = Array.from({ length: 50 }, (_, i) => vectorOf(i));
    const rows = Array.from({ length: 20_000 }, (_, i) =>
      lessonRow(`huge-${String(i).padStart(5, "0")}`, vectors[i % 50] ?? [], {
        importance: 0.5 + (i % 100) / 1000,
      }),
    );
    const index = createLessonIndex({
      source: fakeSource(new Map([["huge", rows]])).source,
      embeddingModel: "m",
      clock: { now: () => lessonsNow },
      maxBytes: 2 * (200 * oneLesson + 20_000 * 40),
    });
    const held = [...(await index.lessonsOf("huge"))].length;
    // An id not held costs its fingerprint (16 bytes), not a string in a set (about 93 measured).
    expect(held).toBeGreaterThanOrEqual(300);
    expect(index.size()).toMatchObject({ lessons: held, notHeld: 20_000 - held });
    expect(index.size().bytes).toBeLessThanOrEqual(200 * oneLesson + 20_000 * 40);
  });

  it("holds a tenant over half the budget by its most valuable lessons, served ones first, and reports the rest", async () => {
    // 40 lessons: every fourth withheld (never served), importance rising with i.
    const rows = rowsOf("big", 40, (i) => ({
      effectiveQuality: i % 4 === 0 ? 0.3 : 0.8,
      importance: 0.2 + i / 100,
    }));
    const fake = fakeSource(new Map([["big", rows]]));
    const reports: { held: number; notHeld: number }[] = [];
    let t = lessonsNow.getTime();
    const index = createLessonIndex({
      source: fake.source,
      embeddingModel: "m",
      clock: { now: () => new Date(t) },
      refreshMs: 10,
      maxBytes: oneLesson * 20,
      onNotHeld: ({ held, notHeld }) => reports.push({ held, notHeld }),
    });
    const held = [...(await index.lessonsOf("big"))].map((l) => l.id);
    expect(held.length).toBeLessThanOrEqual(10);
    // The ids of the 30 or so not held take their share too.
    expect(held.length).toBeGreaterThanOrEqual(8);
    // The most important served lessons (i = 39, 38, 37, 35, …): no withheld one, no low one.
    expect(held).toContain("big-39");
    expect(held.every((id) => Number(id.split("-")[1]) % 4 !== 0)).toBe(true);
    expect(held.every((id) => Number(id.split("-")[1]) >= 25)).toBe(true);
    expect(index.size()).toMatchObject({ tenants: 1, lessons: held.length, notHeld: 40 - held.length });
    expect(index.size().bytes).toBeLessThanOrEqual(oneLesson * 10);
    expect(reports).toEqual([{ held: held.length, notHeld: 40 - held.length }]);

    // Known but not held is still counted: a refresh with nothing changed reads nothing again.
    t += 20;
    await index.lessonsOf("big");
    await index.settled("big");
    expect(fake.fullReads.get("big")).toBe(1);

    // A lesson not held that becomes the most important one is held after the next refresh.
    rows[1] = lessonRow("big-1", vectorOf(1), { importance: 1, updatedAt: new Date(t) });
    t += 20;
    await index.lessonsOf("big");
    await index.settled("big");
    const after = [...(await index.lessonsOf("big"))].map((l) => l.id);
    expect(after).toContain("big-1");
    expect(after.length + index.size().notHeld).toBe(40);
    expect(fake.fullReads.get("big")).toBe(1);
  });

  it("reads a tenant a page at a time, and puts a full read in place only once it is whole", async () => {
    const rows = rowsOf("paged", 11_000).sort((a, b) => (a.id < b.id ? -1 : 1));
    const pages: (string | null)[] = [];
    let gate: Promise<void> | null = null;
    const source: LessonVectorSource = {
      lessonVersion: () => Promise.resolve({ count: rows.length, latest: lessonsNow }),
      lessonVectors: async (_tenant, _model, _since, page) => {
        pages.push(page?.afterId ?? null);
        if (pages.length > 3) await gate;
        const after = page?.afterId ?? null;
        const from = after === null ? 0 : rows.findIndex((r) => r.id > after);
        return rows.slice(from, from + (page?.limit ?? rows.length));
      },
    };
    let t = lessonsNow.getTime();
    const index = createLessonIndex({
      source,
      embeddingModel: "m",
      clock: { now: () => new Date(t) },
      refreshMs: 10,
      maxBytes: 1024 ** 3,
    });
    expect([...(await index.lessonsOf("paged"))]).toHaveLength(11_000);
    expect(pages).toEqual([null, rows[4_999]?.id, rows[9_999]?.id]);
    // A lesson left: everything is read again; while its pages arrive, the old lessons are served.
    rows.pop();
    let open: () => void = () => undefined;
    gate = new Promise<void>((resolve) => (open = resolve));
    t += 20;
    await index.lessonsOf("paged");
    expect([...(await index.lessonsOf("paged"))]).toHaveLength(11_000);
    open();
    await index.settled("paged");
    expect([...(await index.lessonsOf("paged"))]).toHaveLength(10_999);
  });

  it("reads a source that gives every row at once (no pages) once", async () => {
    const fake = fakeSource(new Map([["whole", rowsOf("whole", 6_000)]]));
    const index = createLessonIndex({
      source: fake.source,
      embeddingModel: "m",
      clock: { now: () => lessonsNow },
      maxBytes: 1024 ** 3,
    });
    expect([...(await index.lessonsOf("whole"))]).toHaveLength(6_000);
    expect(fake.fullReads.get("whole")).toBe(1);
  });
});
