import { describe, expect, it } from "vitest";
import { jsonObjectText } from "../../../src/adapters/llm/answer-json.js";
import { parseReflectionOutput } from "../../../src/adapters/llm/reflection-output.js";

const reflection = {
  reflectionText: "At step 4 the WebSurfer read the 2019 figure {from a snippet} instead of the page.",
  strategyText: "Open the source page before quoting a figure.",
  importance: 0.7,
  confidence: 0.6,
  tags: ["web"],
  errorCategory: null,
  patterns: [],
  adjustments: ["add constraint: open the page before quoting a figure"],
  learning: "A figure from a search snippet needs its page opened before it is the answer.",
};
const json = JSON.stringify(reflection, null, 2);
const secrets = { canary: "canary-x", nonce: "n" };

describe("the JSON object in a model's answer", () => {
  it("reads it bare, fenced, or with prose before and after, as real models write it", () => {
    for (const answer of [
      json,
      `\`\`\`json\n${json}\n\`\`\``,
      `Here is the reflection you asked for:\n\n${json}`,
      `${json}\n\nLet me know if you need anything else.`,
      `Sure! Based on the trace:\n\`\`\`json\n${json}\n\`\`\`\nI hope this helps {really}.`,
      `Note {the braces}: the answer follows. ${json} Done.`,
    ]) {
      expect(JSON.parse(jsonObjectText(answer))).toEqual(reflection);
      const parsed = parseReflectionOutput(answer, secrets, "system");
      expect(parsed.ok).toBe(true);
    }
  });

  it("leaves a refusal or a cut-off answer as it is, for the parser to report", () => {
    const refusal = "I'm sorry, but I can't help with analysing this trace.";
    expect(jsonObjectText(refusal)).toBe(refusal);
    const refused = parseReflectionOutput(refusal, secrets, "system");
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.problems.join(" ")).toMatch(/not valid JSON/);

    const cut = json.slice(0, 120);
    expect(parseReflectionOutput(cut, secrets, "system").ok).toBe(false);
  });

  it("stays linear on hostile text: a megabyte of braces and quotes", () => {
    for (const hostile of [
      "{".repeat(1_000_000),
      `{"${"\\".repeat(1_000_000)}`,
      `x{"a":${"[".repeat(500_000)}`,
    ]) {
      const started = performance.now();
      expect(jsonObjectText(hostile)).toBe(hostile);
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });
});

describe("every answer a capable model gave to the generator's requests", () => {
  it("parses with the generator's parser, whatever its form", async () => {
    const { recordedAnswers } = await import("../../support/recorded-answers.js");
    const answers = [
      ...recordedAnswers("examples"),
      ...recordedAnswers("real"),
      ...recordedAnswers("held-out"),
      ...recordedAnswers("held-out-24k"),
    ];
    expect(answers.length).toBeGreaterThanOrEqual(40 + 40 + 23);
    for (const answer of answers) {
      const parsed = parseReflectionOutput(answer.content, secrets, "system");
      expect(parsed.ok, `${answer.id} (${answer.form})`).toBe(true);
      if (parsed.ok) {
        // The analysis of the run and the lesson for the kind of task, both kept.
        expect(parsed.reflection.reflectionText.length).toBeGreaterThan(100);
        expect(parsed.reflection.learning.length).toBeGreaterThan(20);
      }
    }
  });
});
