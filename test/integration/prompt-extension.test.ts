import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLlmAdapters } from "../../src/adapters/llm/llm-adapters.js";
import { loadConfig } from "../../src/config/config.js";
import { useFakeOpenAiServer } from "../support/fake-openai-suite.js";
import { taskEvent } from "../support/task-events.js";

const server = useFakeOpenAiServer();

describe("REFLECTOR_PROMPTS_FILE, end to end", () => {
  it("reaches the openai generator's request to the endpoint", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reflector-prompts-"));
    const file = join(dir, "prompts.json");
    writeFileSync(
      file,
      JSON.stringify({
        failure: "Our house rules: name the step that broke the run ({outcome}) as a runbook entry.",
      }),
    );
    const config = loadConfig({
      REFLECTOR_EMBEDDINGS: "hashing",
      REFLECTOR_GENERATOR: "openai",
      REFLECTOR_MODEL: "fake-model",
      OPENAI_BASE_URL: server().url,
      OPENAI_MAX_RETRIES: "0",
      REFLECTOR_PROMPTS_FILE: file,
    });
    const { generator } = createLlmAdapters(config);
    // The fake answers nothing usable: only the request matters here.
    await generator
      .generate({
        event: taskEvent(),
        attempt: 1,
        violations: [],
        missingFields: [],
        insights: [],
        answerEvaluation: null,
      })
      .catch(() => undefined);
    const [body] = server().chatRequests();
    const user = JSON.stringify(body?.messages);
    expect(user).toContain("Our house rules: name the step that broke the run (timeout) as a runbook entry.");
    expect(user).not.toContain("Find the decisive step");
  });
});
