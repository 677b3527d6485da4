import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readCauseGrade } from "../../../src/adapters/llm/openai-cause-judge.js";

/**
 * What a capable model answered to the model judge's exact requests (held-out sources; provenance
 * in test/fixtures/recorded-answers/PROVENANCE.md), read as the adapter reads them: plain JSON, a
 * fence, a sentence around the object, an extra key.
 */
const dir = new URL("../../fixtures/recorded-answers/held-out-judge/", import.meta.url);
const recordings = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .map(
    (f) =>
      JSON.parse(readFileSync(new URL(f, dir), "utf8")) as { form: string; content: string; text: string },
  );

describe("the model judge's answers as real models give them", () => {
  it("reads every recorded answer, in every form it came in, as a usable grade", () => {
    expect(new Set(recordings.map((r) => r.form))).toEqual(
      new Set(["json", "fenced", "prose-around", "extra-keys"]),
    );
    const unread = recordings.filter((r) => readCauseGrade(r.content, "canary-not-in-it") === null);
    expect(unread).toEqual([]);
  });

  it("drops the keys a model adds and keeps the four it was asked for", () => {
    const extra = recordings.find((r) => r.form === "extra-keys");
    expect(Object.keys(readCauseGrade(extra?.content ?? "", "canary-x") ?? {}).sort()).toEqual([
      "grounded",
      "reason",
      "score",
      "statesCause",
    ]);
  });

  it("refuses an answer that repeats the confidential marker, an unknown cause, a score out of range, a cut answer", () => {
    const ok = '{"cause": "stated", "grounded": true, "score": 0.8, "reason": "step 3"}';
    expect(readCauseGrade(ok, "canary-1")).toEqual({
      statesCause: true,
      grounded: true,
      score: 0.8,
      reason: "step 3",
    });
    expect(readCauseGrade(ok.replace("step 3", "canary-1"), "canary-1")).toBeNull();
    expect(readCauseGrade(ok.replace('"stated"', '"maybe"'), "canary-1")).toBeNull();
    expect(readCauseGrade(ok.replace("0.8", "8"), "canary-1")).toBeNull();
    expect(readCauseGrade(ok.slice(0, 40), "canary-1")).toBeNull();
    expect(readCauseGrade("I can't help with grading this.", "canary-1")).toBeNull();
  });
});
