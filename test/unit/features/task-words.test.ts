import { describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../../../src/adapters/embedding/hashing-embedder.js";
import { episodeText } from "../../../src/domain/memory/trace-text.js";
import {
  createLessonIndex,
  type LessonVectorRow,
} from "../../../src/features/lessons/lessons-for-task-index.js";
import { rankLessons, unitVector } from "../../../src/features/lessons/lessons-for-task-rank.js";
import {
  functionWords,
  sharedWordsMinNats,
  taskOfEpisode,
  WordRarity,
  wordsOf,
} from "../../../src/features/lessons/task-words.js";
import { indexedLesson } from "../../support/lessons.js";
import { taskEvent } from "../../support/task-events.js";

const now = new Date("2026-11-26T12:00:00Z");
const embedder = createHashingEmbedder();

describe("task words", () => {
  it("keeps letters only, three or more, lower case, with common endings cut", () => {
    expect(wordsOf("Cancel my 2 flights, please! Cancelled? ok")).toEqual(["cancel", "flight", "cancell"]);
    expect(wordsOf("ok to 42 a")).toEqual([]);
    expect(wordsOf("Réserver un vol")).toEqual(["réserver", "vol"]);
  });

  it("leaves out English function words, greetings and politeness, before endings are cut", () => {
    expect(
      wordsOf(
        "Hello! Can you help me? I'd like to change my flight from Boston, which is tomorrow, and thanks",
      ),
    ).toEqual(["help", "like", "change", "flight", "boston", "tomorrow"]);
    expect(wordsOf("Hi there, could you please tell me whether they would? Thank you so much.")).toEqual([
      "tell",
    ]);
    // Cut endings would otherwise turn "yourselves" into a word of its own.
    expect(wordsOf("yourselves themselves")).toEqual([]);
  });

  it("lists function words as the tokenizer reads them (lower-case letters, three or more)", () => {
    for (const word of functionWords) expect(word).toMatch(/^\p{Ll}{3,}$/u);
    expect(functionWords.size).toBeGreaterThan(150);
  });

  it("weighs no function word, however rare among the tenant's lessons", () => {
    // Each lesson's task has function words no other one has: by rarity alone they would count.
    const tasks = [
      "Hello, can you cancel my reservation",
      "Which seat and which meal for the trip",
      "From Boston to Denver, thanks",
      "Could you upgrade the cabin please",
      "Book a flight for whom it may concern",
    ];
    const rarity = new WordRarity();
    for (const t of tasks) rarity.add(wordsOf(t));
    const idle = new Set(wordsOf("hello, can you tell me which one is from here? thanks, and please"));
    for (const t of tasks) expect(rarity.shared(idle, wordsOf(t))).toBe(0);
    // A content word of one lesson still counts.
    expect(rarity.shared(new Set(wordsOf("cancel it")), wordsOf(tasks[0] ?? ""))).toBeGreaterThan(1);
  });

  it("reads the task part of a stored episode: its description and goal, not its outcome or steps", () => {
    const event = taskEvent();
    const task = taskOfEpisode(episodeText(event, event.events[0]));
    expect(task).toBe(`${event.task.description}\n${event.task.goal ?? ""}`);
    expect(taskOfEpisode("no outcome line")).toBe("no outcome line");
  });

  it("weighs a shared word by its rarity among the tenant's lessons, kept as lessons come and go", () => {
    const rarity = new WordRarity();
    const cancel = wordsOf("cancel the flight reservation");
    const change = wordsOf("change the flight date");
    const book = wordsOf("book a flight for two");
    for (const words of [cancel, change, book]) rarity.add(words);
    const task = new Set(wordsOf("I need to cancel my flight"));
    const rare = rarity.shared(task, cancel);
    // "flight" is in every lesson: it carries almost nothing; "cancel" is in one.
    expect(rarity.shared(task, change)).toBe(0);
    expect(rare).toBeGreaterThan(0.5);
    rarity.remove(book);
    rarity.add(wordsOf("cancel a hotel"));
    expect(rarity.shared(task, cancel)).toBeLessThan(rare);
  });

  it("asks less while the tenant has too few lessons for any word to be rare", () => {
    const rarity = new WordRarity();
    rarity.add(wordsOf("cancel the flight"));
    // One lesson: one shared word is enough.
    expect(rarity.minShared()).toBeLessThan(0.5);
    for (let i = 0; i < 100; i += 1)
      rarity.add([`word${String.fromCharCode(97 + (i % 26))}x${"y".repeat(i)}`]);
    expect(rarity.minShared()).toBe(sharedWordsMinNats);
  });
});

describe("ranking with shared words", () => {
  async function lesson(id: string, text: string, task: string | undefined) {
    const [vector] = await embedder.embed([text]);
    return indexedLesson(id, vector ?? [], task ? { taskWords: wordsOf(task) } : {});
  }

  it("leaves out a lesson near in meaning whose task shares no rare word, and keeps one without a stored task", async () => {
    const common = "airline customer service help the user with the flight reservation";
    const lessons = [
      await lesson("cancel", `${common} cancel`, `${common} cancel`),
      await lesson("change", `${common} change date`, `${common} change date`),
      await lesson("upgrade", `${common} upgrade cabin`, `${common} upgrade cabin`),
      await lesson("old", `${common} baggage`, undefined),
    ];
    const rarity = new WordRarity();
    // As the index counts them: the lessons whose task is stored.
    for (const l of lessons) if (l.taskWords) rarity.add(l.taskWords);
    const ask = async (text: string) =>
      rankLessons(
        lessons,
        {
          vector: unitVector((await embedder.embed([text]))[0] ?? []) ?? new Float32Array(),
          limit: 5,
          minImportance: 0,
          floor: 0.05,
          now,
          words: { task: new Set(wordsOf(text)), rarity },
        },
        embedder.similarityScale,
      ).map((r) => r.lesson.id);
    const delayed = await ask(`${common} my flight is delayed`);
    expect(delayed).not.toContain("cancel");
    expect(delayed).not.toContain("change");
    expect(delayed).toContain("old");
    expect(await ask(`${common} please cancel it`)).toContain("cancel");
  });

  it("is kept by the index as lessons arrive, change and leave", async () => {
    const rows: LessonVectorRow[] = [];
    let count = 0;
    const row = async (id: string, task: string | null): Promise<LessonVectorRow> => ({
      id,
      projectId: "p",
      strategyText: null,
      learning: "l",
      adjustments: [],
      tags: [],
      importance: 0.8,
      effectiveQuality: 0.8,
      createdAt: now,
      lastSeenAt: now,
      updatedAt: new Date(now.getTime() + (count += 1)),
      vector: (await embedder.embed([task ?? id]))[0] ?? [],
      task,
    });
    rows.push(await row("a", "cancel the flight"), await row("b", "change the flight"), await row("c", null));
    const clock = { now: () => new Date(now.getTime() + count * 10_000) };
    const index = createLessonIndex({
      source: {
        lessonVersion: () =>
          Promise.resolve({
            count: rows.length,
            latest: rows.reduce<Date | null>((m, r) => (!m || r.updatedAt > m ? r.updatedAt : m), null),
          }),
        lessonVectors: (_t, _m, since) => Promise.resolve(rows.filter((r) => !since || r.updatedAt >= since)),
      },
      embeddingModel: embedder.name,
      clock,
      refreshMs: 0,
    });
    await index.lessonsOf("t");
    const task = new Set(wordsOf("cancel"));
    const before = index.rarityOf("t").shared(task, ["cancel"]);
    expect(before).toBeGreaterThan(0);
    // "b" now is about cancelling too: "cancel" is in both lessons, and rarer no more.
    rows[1] = await row("b", "cancel the hotel");
    await index.lessonsOf("t");
    await index.settled("t");
    expect(index.rarityOf("t").shared(task, ["cancel"])).toBeLessThan(before);
    rows.splice(1, 1);
    await index.lessonsOf("t");
    await index.settled("t");
    const alone = new WordRarity();
    alone.add(wordsOf("cancel the flight"));
    expect(index.rarityOf("t").shared(task, ["cancel"])).toBeCloseTo(alone.shared(task, ["cancel"]), 5);
  });
});
