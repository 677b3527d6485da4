import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseReflectionOutput } from "../../src/adapters/llm/reflection-output.js";
import { attributeFailure } from "../../src/domain/attribution/attribute-failure.js";
import { replayModel, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { exampleRecordings, type Recording } from "../support/recorded-answers.js";

/**
 * `reflector reflect FILE` with a model: the CLI, run as a user runs it, against the local
 * OpenAI-compatible server replaying what a capable model answered to this failure
 * (test/fixtures/recorded-answers/). The lesson and the attribution it prints must be the model's,
 * not the offline generator's or the rules'. No Kafka, Postgres or Redis is used.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const cli = fileURLToPath(new URL("../support/run-cli.ts", import.meta.url));
const run = promisify(execFile);

// A failure whose recorded answer blames another step than the offline rules do, and keeps it.
const recording = exampleRecordings().find((r) => r.answer.id === "examples/06-hotel-booking-chain/0");
let fake: FakeOpenAiServer;

beforeAll(async () => {
  fake = await startFakeOpenAiServer({ chat: replayModel(exampleRecordings()) });
});

afterAll(async () => {
  await fake.close();
});

/** The recorded answer read as the generator reads it (prose around the object cut off). */
function modelAnswer(r: Recording) {
  const text = r.answer.content;
  const parsed = parseReflectionOutput(
    text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1),
    { canary: "canary-not-in-any-answer", nonce: "nonce-not-in-any-answer" },
    "",
    r.event,
  );
  if (!parsed.ok) throw new Error(`${r.answer.id}: ${parsed.problems.join("; ")}`);
  return parsed.reflection;
}

async function reflect(file: string, env: Record<string, string>) {
  const { stdout } = await run(process.execPath, ["--import", "tsx", cli, "reflect", file], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", REFLECTOR_EMBEDDINGS: "hashing", ...env },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as {
    reflected: boolean;
    generator: string;
    verdict: string;
    attribution: { stepIndex: number; toolName?: string; evidence?: string } | null;
    lesson: { strategyText: string; adjustments: string[]; reflectionText: string };
  };
}

describe("reflector reflect FILE with a model", () => {
  it("prints the lesson and the attribution of the model's answer", async () => {
    if (!recording) throw new Error("the recorded answer for examples/06-hotel-booking-chain/0 is missing");
    const answer = modelAnswer(recording);
    const rules = attributeFailure(recording.event);
    // The case tells the two apart: the model blames another step than the rules.
    expect(answer.attribution?.stepIndex).toBeDefined();
    expect(answer.attribution?.stepIndex).not.toBe(rules?.stepIndex);

    const file = join(mkdtempSync(join(tmpdir(), "reflect-model-")), "trace.json");
    writeFileSync(file, JSON.stringify(recording.event));
    fake.reset();
    const printed = await reflect(file, {
      REFLECTOR_GENERATOR: "openai",
      REFLECTOR_MODEL: "recorded",
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: fake.url,
    });

    expect(printed.reflected).toBe(true);
    expect(printed.generator).toBe("openai");
    expect(printed.lesson.strategyText).toBe(answer.strategyText);
    expect(printed.lesson.adjustments).toEqual(answer.adjustments);
    expect(printed.lesson.reflectionText).toBe(answer.reflectionText);
    expect(printed.attribution).toMatchObject({
      stepIndex: answer.attribution?.stepIndex,
      toolName: answer.attribution?.toolName,
      evidence: answer.attribution?.evidence,
    });
    expect(["accepted", "accepted_with_warnings", "rejected"]).toContain(printed.verdict);
    // The model was asked, about this trace.
    const asked = fake.requests.filter((r) => r.path.endsWith("/chat/completions"));
    expect(asked.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(asked[0]?.body)).toContain(recording.event.task.description.slice(0, 40));

    // Offline, the same file gives the rules' step and another lesson.
    const offline = await reflect(file, {});
    expect(offline.generator).toBe("heuristic");
    expect(offline.attribution?.stepIndex).toBe(rules?.stepIndex);
    expect(offline.lesson.strategyText).not.toBe(answer.strategyText);
  });
});
