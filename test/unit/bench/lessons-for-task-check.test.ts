import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readLessonCheck } from "../../../src/adapters/llm/lesson-check-prompt.js";
import { unitVector } from "../../../src/features/lessons/lessons-for-task-rank.js";
import { indexedLesson, lessonsNow } from "../../support/lessons.js";
import {
  checkPrompt,
  recordedChoice,
  recordingUrl,
  type RecordedCheck,
} from "../../../bench/lessons-for-task-check.js";

const now = lessonsNow;
const lesson = (key: string, vector: number[]) => ({ ...indexedLesson(key, vector), key });
const lessons = [lesson("L0", [1, 0, 0]), lesson("L1", [0.8, 0.6, 0]), lesson("L2", [0, 0, 1])];

describe("the lesson check on the benchmark's queries", () => {
  it("offers the lessons nearest in meaning above relevance 0, nearest first, and hashes the exact prompt", () => {
    const query = { name: "q", text: "task", vector: unitVector([1, 0.1, 0]) ?? new Float32Array() };
    const p = checkPrompt(query, lessons, { unrelated: 0.2, related: 0.5 }, now);
    expect(p.candidates.map((c) => c.key)).toEqual(["L0", "L1"]);
    expect(p.promptSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(checkPrompt(query, lessons, { unrelated: 0.2, related: 0.5 }, now).promptSha256).toBe(
      p.promptSha256,
    );
    const other = checkPrompt(
      { ...query, text: "another task" },
      lessons,
      { unrelated: 0.2, related: 0.5 },
      now,
    );
    expect(other.promptSha256).not.toBe(p.promptSha256);
  });

  it("serves nothing without asking when no lesson is near, and says when no answer was recorded", () => {
    const far = { name: "far", text: "task", vector: unitVector([0, -1, 0]) ?? new Float32Array() };
    expect(recordedChoice(far, checkPrompt(far, lessons, { unrelated: 0.2, related: 0.5 }, now))).toEqual({
      keys: [],
    });
    const near = {
      name: "never-recorded/query",
      text: "task",
      vector: unitVector([1, 0, 0]) ?? new Float32Array(),
    };
    expect(recordedChoice(near, checkPrompt(near, lessons, undefined, now))).toEqual({
      missing: "unrecorded",
    });
  });
});

describe("the recorded lesson-check answers", () => {
  const folder = new URL("../../fixtures/recorded-answers/lesson-check/", import.meta.url);
  const files = readdirSync(folder).filter((f) => f.endsWith(".json"));

  it("are kept each under its query's name, for one prompt, with who answered, and each reads", () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const r = JSON.parse(readFileSync(new URL(file, folder), "utf8")) as RecordedCheck;
      expect(recordingUrl(r.name).href).toBe(new URL(file, folder).href);
      expect(r.promptSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(r.answeredBy).toMatch(/answering as the lesson-check model/);
      expect(Number.isNaN(Date.parse(r.recordedAt))).toBe(false);
      // Eight candidates at most are offered: every answer reads as some of them.
      expect(readLessonCheck({ raw: r.content, cut: false }, 8), file).not.toBeNull();
    }
  });
});
