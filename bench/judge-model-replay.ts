/**
 * The model judge (`REFLECTOR_JUDGE=model`) replayed: a capable model's recorded grades of the
 * held-out analyses (test/fixtures/recorded-answers/held-out-judge/, provenance in PROVENANCE.md)
 * served by a local OpenAI-compatible server that answers a request only with the grade recorded
 * for that exact request (its sha256), read through Reflector's own adapter (fences, prose and
 * extra keys included; a repair request when an answer is unusable).
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import OpenAI from "openai";
import { createOpenAiCauseJudge } from "../src/adapters/llm/openai-cause-judge.js";
import { estimateChatTokens, estimateTokens } from "../src/adapters/llm/token-estimate.js";
import type { Reflection, TaskCompleted } from "../src/domain/contracts/index.js";
import type { CauseGrade } from "../src/domain/quality/cause-grade.js";
import { startFakeOpenAiServer, type RecordedRequest } from "../test/support/fake-openai-server.js";
import { judgeSecrets, type JudgedText } from "./real-logs/dump-judge-prompts.js";

interface JudgeRecording {
  id: string;
  text: JudgedText;
  promptSha256: string;
  content: string;
}

export const judgeFixtures = new URL("../test/fixtures/recorded-answers/held-out-judge/", import.meta.url);

function loadJudgeRecordings(): Map<string, JudgeRecording> {
  const out = new Map<string, JudgeRecording>();
  if (!existsSync(judgeFixtures)) return out;
  for (const file of readdirSync(judgeFixtures).filter((f) => f.endsWith(".json"))) {
    const rec = JSON.parse(readFileSync(new URL(file, judgeFixtures), "utf8")) as JudgeRecording;
    out.set(rec.promptSha256, rec);
  }
  return out;
}

const shaOf = (request: RecordedRequest) => {
  const body = request.body as { messages?: { content?: string }[] };
  const [system, user] = body.messages ?? [];
  return createHash("sha256")
    .update(`${system?.content ?? ""}\n${user?.content ?? ""}`)
    .digest("hex");
};

/** What the replayed judge answered and what it cost, per analysis. */
export interface ReplayedGrade {
  grade: CauseGrade | null;
  /** Whether the request today's code builds is the one that was answered (sha256). */
  recorded: boolean;
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

/** A model judge over the recordings; `close` stops its server. */
export async function startReplayedJudge() {
  const recordings = loadJudgeRecordings();
  const server = await startFakeOpenAiServer({
    chat: (request) => {
      const rec = recordings.get(shaOf(request));
      return rec
        ? { kind: "completion", content: rec.content }
        : { kind: "status", status: 404, body: { error: { message: "no recorded answer to this request" } } };
    },
  });
  const client = new OpenAI({ apiKey: "unused", baseURL: server.url, maxRetries: 0 });
  return {
    size: recordings.size,
    async grade(event: TaskCompleted, reflection: Reflection, id: string, text: JudgedText) {
      const { canary, nonce } = judgeSecrets(id, text);
      const tokens = [canary.slice("canary-".length), nonce];
      let promptTokens = 0;
      let completionTokens = 0;
      const before = server.requests.length;
      const judge = createOpenAiCauseJudge({
        client,
        model: "recorded",
        timeoutMs: 10_000,
        maxRetries: 0,
        randomToken: () => tokens.shift() ?? "",
      });
      let grade: CauseGrade | null = null;
      let recorded = true;
      try {
        grade = await judge.grade(event, reflection);
      } catch {
        recorded = false;
      }
      for (const request of server.requests.slice(before)) {
        const body = request.body as { messages: { content: string }[] };
        promptTokens += estimateChatTokens(body.messages);
        const rec = recordings.get(shaOf(request));
        completionTokens += rec ? estimateTokens(rec.content) : 0;
      }
      return {
        grade,
        recorded,
        requests: server.requests.length - before,
        promptTokens,
        completionTokens,
      } satisfies ReplayedGrade;
    },
    close: () => server.close(),
  };
}
