import { describe, expect, it } from "vitest";
import { lessonsOutput, LessonsUsageError } from "../../../src/cli/lessons-command.js";

/** `reflector lessons` against a recorded fetch: what it asks the API, and what it prints. */
function recordingFetch(answer: unknown, status = 200) {
  const calls: { url: string; method: string; body: unknown; auth: string | undefined }[] = [];
  const fake = (input: string, init?: RequestInit) => {
    const headers = init?.headers as Record<string, string> | undefined;
    calls.push({
      url: input,
      method: init?.method ?? "GET",
      body: typeof init?.body === "string" ? (JSON.parse(init.body) as unknown) : null,
      auth: headers?.authorization,
    });
    return Promise.resolve(new Response(JSON.stringify(answer), { status }));
  };
  return { fetch: fake as unknown as typeof fetch, calls };
}

const base = { url: "http://reflector:8080", key: "cli-key-12345", json: false };

describe("reflector lessons", () => {
  it("asks for the lessons of a task and prints each with its prompt", async () => {
    const { fetch, calls } = recordingFetch({
      lessons: [
        {
          reflectionId: "r-1",
          relevance: 0.71,
          effectiveQuality: 0.8,
          strategyText: "s",
          adjustments: [],
          prompt: "Paginate postgres_query reads.",
        },
      ],
      floor: 0.3,
    });
    const out = await lessonsOutput(
      { ...base, task: "export orders", tools: "postgres_query, csv", limit: 3 },
      fetch,
    );
    expect(calls[0]).toEqual({
      url: "http://reflector:8080/api/v1/lessons/for-task",
      method: "POST",
      body: { task: "export orders", tools: ["postgres_query", "csv"], limit: 3 },
      auth: "Bearer cli-key-12345",
    });
    expect(out.lines).toEqual(["1. r-1  relevance 0.71  quality 0.80", "   Paginate postgres_query reads."]);
  });

  it("says when the model chose the lessons, or found none", async () => {
    const lesson = {
      reflectionId: "r-2",
      relevance: 0.12,
      effectiveQuality: 0.9,
      strategyText: "s",
      adjustments: [],
      prompt: "Check the fare rules.",
    };
    const chosen = await lessonsOutput(
      { ...base, task: "change my flight" },
      recordingFetch({ lessons: [lesson], floor: 0.28, checkedBy: "model" }).fetch,
    );
    expect(chosen.lines).toEqual([
      "chosen by the model among the nearest in meaning:",
      "1. r-2  relevance 0.12  quality 0.90",
      "   Check the fare rules.",
    ]);
    const none = await lessonsOutput(
      { ...base, task: "my flight was delayed" },
      recordingFetch({ lessons: [], floor: 0.28, checkedBy: "model" }).fetch,
    );
    expect(none.lines).toEqual(["no lesson applies, as the model read the nearest ones"]);
    const byMeaning = await lessonsOutput(
      { ...base, task: "my flight was delayed" },
      recordingFetch({ lessons: [], floor: 0.28, checkedBy: "meaning" }).fetch,
    );
    expect(byMeaning.lines).toEqual(["no lesson applies above the relevance floor (0.28)"]);
  });

  it("searches by words and tags, and says when there is more", async () => {
    const { fetch, calls } = recordingFetch({
      items: [
        {
          id: "r-2",
          tags: ["timeout"],
          effective_quality: 0.5,
          served: false,
          strategy_text: "Bound reads.",
        },
      ],
      next_offset: 10,
    });
    const out = await lessonsOutput({ ...base, q: "timeout", tags: "sql,timeout" }, fetch);
    expect(calls[0]?.url).toBe("http://reflector:8080/api/v1/reflections?q=timeout&tags=sql%2Ctimeout");
    expect(out.lines).toEqual([
      "1. r-2  [timeout]  quality 0.50  (withheld)",
      "   Bound reads.",
      "… more: --offset 10",
    ]);
  });

  it("needs a key, and passes the API's refusal on", async () => {
    await expect(lessonsOutput({ url: base.url, json: false })).rejects.toThrow(LessonsUsageError);
    const { fetch } = recordingFetch({ error: "unauthorized", message: "unknown API key" }, 401);
    await expect(lessonsOutput({ ...base, q: "x" }, fetch)).rejects.toThrow(
      /401 unauthorized: unknown API key/,
    );
  });
});
