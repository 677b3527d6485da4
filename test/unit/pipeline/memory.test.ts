import { describe, expect, it } from "vitest";
import { createHeuristicGenerator } from "../../../src/adapters/llm/heuristic-generator.js";
import type { Reflection, ReflectionOutcome, TaskCompleted } from "../../../src/domain/contracts/index.js";
import type { MemoryConfig } from "../../../src/domain/memory/memory-config.js";
import type { ReflectionGenerator } from "../../../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

function setup(generator: ReflectionGenerator = createHeuristicGenerator(), memory?: MemoryConfig) {
  const store = createFakeStore();
  const index = createFakeIndex();
  let calls = 0;
  const processor = createOfflineProcessor(
    { store: store.store, index: index.index },
    {
      generator: {
        name: generator.name,
        generate: (request) => {
          calls += 1;
          return generator.generate(request);
        },
      },
      ...(memory ? { memory } : {}),
    },
  );
  const outcome = async (event: TaskCompleted) =>
    (await processor.process(event)).outputs.find((o) => o.role !== "loopDecision")
      ?.value as ReflectionOutcome;
  return { processor, store, index, outcome, calls: () => calls };
}

/** A wrong final answer, reported with the generic message an answer-grading platform sends. */
const wrongAnswer = (description: string, actor: string, toolName: string, content: string) =>
  taskEvent({
    task: { description },
    outcome: "failure",
    error: { category: "evaluation_error", message: "the final answer was judged incorrect" },
    events: [
      {
        eventId: "s1",
        type: "tool_response",
        timestamp: "2026-11-20T10:00:00.000Z",
        actor,
        toolName,
        content,
        error: { message: content },
      },
    ],
  });

describe("memory: one lesson per root cause", () => {
  it("gives unrelated failures with one generic message lessons of their own", async () => {
    // A model that reads each trace: its lesson names the failing step's agent, tool and error.
    const reading: ReflectionGenerator = {
      name: "openai",
      generate: ({ event }) => {
        const step = event.events[0];
        const tool = step?.toolName ?? "the tool";
        return Promise.resolve({
          reflectionText:
            `At step 0 ${step?.actor ?? "the agent"} called ${tool} and got "${step?.content ?? ""}"; it answered ` +
            `"${event.task.description}" anyway because it assumed the ${tool} result was usable.`,
          strategyText: null,
          importance: 0.7,
          confidence: 0.7,
          tags: [tool],
          errorCategory: "evaluation_error",
          patterns: [],
          adjustments: [`add constraint: stop and report when ${tool} returns "${step?.content ?? ""}"`],
          learning: `An error from ${tool} means the answer has no basis; report it instead of answering.`,
          attribution: { stepIndex: 0, eventId: "s1", actor: step?.actor, toolName: tool, confidence: 0.8 },
        });
      },
    };
    const { outcome, store, calls } = setup(reading);
    const first = await outcome(
      wrongAnswer(
        "How many studio albums did Mercedes Sosa publish between 2000 and 2009?",
        "WebSurfer",
        "web_search",
        "No results found for discography page",
      ),
    );
    const second = await outcome(
      wrongAnswer(
        "Convert the CSV of monthly rainfall to inches and report the wettest month",
        "Coder",
        "python_exec",
        "ZeroDivisionError: division by zero in rainfall_to_inches",
      ),
    );
    expect(first.memory?.signatureLevel).toBe("step");
    expect(second.signature).not.toBe(first.signature);
    expect(second.generator).toBe("openai");
    expect(first.stored && second.stored).toBe(true);
    expect(second.reflectionId).not.toBe(first.reflectionId);
    expect(calls()).toBeGreaterThanOrEqual(2);
    expect(store.reflections.size).toBe(2);
  });

  it("reuses a lesson for a recurrence of the same failure, at no generator cost", async () => {
    const { outcome, calls } = setup();
    const first = await outcome(taskEvent());
    const before = calls();
    const again = await outcome(taskEvent());
    expect(again).toMatchObject({
      reflectionId: first.reflectionId,
      generator: "reused",
      memory: { action: "reuse", signatureLevel: "message" },
    });
    expect(again.memory?.similarity).toBeGreaterThanOrEqual(0.99);
    expect(calls()).toBe(before);
  });

  it("writes one lesson for a burst of one failure processed at once, and reuses it for the rest", async () => {
    // A generator that takes its time, so every event of the burst has matched before the first commits.
    const offline = createHeuristicGenerator();
    const slow: ReflectionGenerator = {
      name: offline.name,
      generate: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return offline.generate(request);
      },
    };
    const { outcome, store, calls } = setup(slow);
    const burst = await Promise.all([taskEvent(), taskEvent(), taskEvent()].map((e) => outcome(e)));
    const actions = burst.map((o) => o.memory?.action).sort();
    expect(actions).toEqual(["add", "reuse", "reuse"]);
    expect(new Set(burst.map((o) => o.reflectionId)).size).toBe(1);
    expect(calls()).toBe(1);
    expect(store.reflections.size).toBe(1);
  });

  it("does not reuse a lesson for a trace far from its source, even under the same error", async () => {
    const { outcome, store } = setup();
    const first = await outcome(taskEvent());
    const other = taskEvent({
      task: { description: "Summarise the quarterly marketing survey for the board" },
      events: [
        {
          eventId: "x1",
          type: "error_event",
          timestamp: "2026-11-20T10:00:30.000Z",
          actor: "Analyst",
          toolName: "survey_api",
          content: "survey export stalled while paging responses",
          error: { message: "survey export stalled", code: "QUERY_TIMEOUT" },
        },
      ],
    });
    const second = await outcome(other);
    expect(second.generator).not.toBe("reused");
    expect(second.signature).not.toBe(first.signature);
    expect(second.memory?.signatureLevel).not.toBe("message");
    expect(store.reflections.size + store.aliases.size).toBe(2);
  });

  it("merges a near-duplicate lesson under another signature into the stored one", async () => {
    const lesson = (task: string): Reflection => ({
      reflectionText:
        `For "${task}" the WebSurfer agent answered from a web_search snippet because it assumed the snippet ` +
        "was current; the strategy skipped opening the source page, a systematic error in how it verifies facts.",
      strategyText: "Open the cited page and confirm the figure before answering.",
      importance: 0.7,
      confidence: 0.8,
      tags: ["verification"],
      errorCategory: "unverified_claim",
      patterns: ["answer from web_search snippet"],
      adjustments: [
        "add constraint: open the source page before using a figure from a web_search snippet",
        "set max_answers_from_snippets = 0",
      ],
      learning: "Facts taken from web_search snippets must be confirmed on the source page before answering.",
    });
    const { outcome, store, calls } = setup(
      { name: "heuristic", generate: ({ event }) => Promise.resolve(lesson(event.task.description)) },
      // The lexical embedder of unit tests sees the two task names as a difference of meaning.
      { reuseMinSimilarity: 0.75, mergeMinSimilarity: 0.8 },
    );
    const first = await outcome(
      wrongAnswer("Population of Lyon in 2021", "WebSurfer", "web_search", "snippet says 513,000 (2019)"),
    );
    const second = await outcome(
      wrongAnswer(
        "Height of the Burj Khalifa spire",
        "WebSurfer",
        "web_search",
        "snippet: 828 m (old figure)",
      ),
    );
    expect(second.signature).not.toBe(first.signature);
    expect(second).toMatchObject({
      reflectionId: first.reflectionId,
      stored: true,
      deduplicated: true,
      occurrences: 2,
    });
    // The better-judged text stands for both (update), or the stored one stays (noop).
    const survivor = [...store.reflections.values()][0];
    const updated = second.memory?.action === "update";
    expect(["update", "noop"]).toContain(second.memory?.action);
    expect(updated ? second.qualityScore > first.qualityScore : true).toBe(true);
    expect(survivor?.reflection.reflectionText).toBe((updated ? second : first).reflection.reflectionText);
    expect(store.reflections.size).toBe(1);
    expect(store.aliases.size).toBe(1);

    // The merged signature now leads to the surviving lesson.
    const callsBefore = calls();
    const third = await outcome(
      wrongAnswer(
        "Height of the Burj Khalifa spire",
        "WebSurfer",
        "web_search",
        "snippet: 828 m (old figure)",
      ),
    );
    expect(third).toMatchObject({ reflectionId: first.reflectionId, generator: "reused", occurrences: 3 });
    expect(calls()).toBe(callsBefore);
  });

  it("does not merge alike lessons that blame different failing steps", async () => {
    // One wording for both, as a template generator writes it; only the blamed step differs.
    const lesson = (event: TaskCompleted): Reflection => {
      const step = event.events[0];
      return {
        reflectionText:
          `For "${event.task.description}" the ${step?.actor ?? "agent"} answered from a ${step?.toolName ?? "tool"} ` +
          "result because it assumed the figure was current; the strategy skipped confirming it on the source " +
          "page, a systematic error in how it verifies facts.",
        strategyText: "Open the cited page and confirm the figure before answering.",
        importance: 0.7,
        confidence: 0.8,
        tags: ["verification"],
        errorCategory: "unverified_claim",
        patterns: ["answer from unconfirmed figure"],
        adjustments: [
          "add constraint: open the source page before using a figure from a search result",
          "set max_answers_from_snippets = 0",
        ],
        learning: "Figures taken from search results must be confirmed on the source page before answering.",
        attribution: { stepIndex: 0, actor: step?.actor, toolName: step?.toolName, confidence: 0.8 },
      };
    };
    const { outcome, store } = setup(
      { name: "heuristic", generate: ({ event }) => Promise.resolve(lesson(event)) },
      { reuseMinSimilarity: 0.75, mergeMinSimilarity: 0.8 },
    );
    const first = await outcome(
      wrongAnswer("Population of Lyon in 2021", "WebSurfer", "web_search", "snippet says 513,000 (2019)"),
    );
    const second = await outcome(
      wrongAnswer(
        "Height of the Burj Khalifa spire",
        "WebSurfer",
        "fetch_page",
        "page says 828 m (old figure)",
      ),
    );
    console.log(
      JSON.stringify([first.memory, second.memory, second.verdict, second.qualityScore, first.qualityScore]),
    );
    expect(second.memory?.action).toBe("add");
    expect(second.reflectionId).not.toBe(first.reflectionId);
    expect(store.reflections.size).toBe(2);

    // The same step failing again under another task is the same lesson, merged.
    const third = await outcome(
      wrongAnswer("Area of Lake Geneva", "WebSurfer", "web_search", "snippet: 580 km2 (old figure)"),
    );
    expect(third.memory?.action).toMatch(/^(update|noop)$/);
    expect(third.reflectionId).toBe(first.reflectionId);
    expect(store.reflections.size).toBe(2);
  });
});

describe("memory: a verdict that follows the evidence", () => {
  // Worded the way a model writes about this task: the offline hashing embedder of unit tests
  // sees relevance only in shared words.
  const timeoutLesson: Reflection = {
    reflectionText:
      "Fetching the customer order history timed out: postgres_query exceeded the 30s limit because the agent " +
      "assumed one query over all orders for customer analysis would finish. Canceling statement due to " +
      "statement timeout shows the strategy fetched every order at once, a fundamental flaw for large tables.",
    strategyText: "Page through orders by customer key with LIMIT 1000.",
    importance: 0.8,
    confidence: 0.85,
    tags: ["timeout", "postgres_query"],
    errorCategory: "timeout_error",
    patterns: ["timeout on postgres_query"],
    adjustments: [
      "add constraint: postgres_query must filter orders on an indexed customer key",
      "set page_size = 1000 for postgres_query",
    ],
    learning:
      "Large reads of customer orders through postgres_query must be paginated; a raised timeout only moves the failure.",
  };

  it("stores the lesson of a model that answers patterns: [] with one call, and reuses it with none", async () => {
    const { outcome, calls, store } = setup({
      name: "openai",
      generate: () => Promise.resolve({ ...timeoutLesson, patterns: [] }),
    });
    const first = await outcome(taskEvent());
    expect(calls()).toBe(1);
    expect(first).toMatchObject({ stored: true, verdict: "accepted", violations: [] });
    for (let i = 0; i < 3; i += 1) await outcome(taskEvent());
    expect(calls()).toBe(1); // 4 identical occurrences, 1 call in all
    expect([...store.reflections.values()][0]?.occurrences).toBe(4);
  });

  it("asks the model once when only the pattern lacks evidence, and accepts the lesson once evidence accrues", async () => {
    const { outcome, calls, store } = setup({
      name: "openai",
      generate: () => Promise.resolve(timeoutLesson),
    });
    const first = await outcome(taskEvent());
    expect(calls()).toBe(1); // no retry: a rewrite cannot make a pattern proven
    expect(first.verdict).toBe("accepted_with_warnings");
    expect(first.violations.join()).toMatch(/Unproven pattern 'timeout on postgres_query'/);
    expect(first.stored).toBe(true); // a hypothesis never blocks storage

    const verdicts = [];
    for (let i = 0; i < 3; i += 1) verdicts.push((await outcome(taskEvent())).verdict);
    expect(calls()).toBe(1);
    // Episodes 1–2: fewer than 3 occurrences; from the 3rd the pattern is proven.
    expect(verdicts).toEqual(["accepted_with_warnings", "accepted", "accepted"]);
    expect([...store.reflections.values()][0]?.verdict).toBe("accepted");
  });

  it("counts the lesson's own recurrences as evidence of patterns written in the model's words", async () => {
    // None of these words is in the trace: only recurrences of the same mistake can prove it.
    const abstract = { ...timeoutLesson, patterns: ["one unbounded read assumed to be cheap"] };
    const { outcome, calls } = setup({ name: "openai", generate: () => Promise.resolve(abstract) });
    const first = await outcome(taskEvent());
    expect(first.verdict).toBe("accepted_with_warnings");
    const verdicts = [];
    for (let i = 0; i < 3; i += 1) verdicts.push((await outcome(taskEvent())).verdict);
    expect(calls()).toBe(1);
    // Seen twice: not yet a recurring pattern; from the third occurrence it is.
    expect(verdicts).toEqual(["accepted_with_warnings", "accepted", "accepted"]);
  });
});

describe("memory: a silent failing call is recognised by its action", () => {
  /**
   * The offline read-back lesson names the tool and its arguments only, which the judge does not
   * store (it fits every failure of that tool); this generator adds the value the agent chose.
   */
  const offline = createHeuristicGenerator();
  const naming: ReflectionGenerator = {
    name: "heuristic",
    generate: async (request) => {
      const reflection = await offline.generate(request);
      const call = request.event.events.find((e) => e.toolName === "book_reservation")?.content ?? "{}";
      const { payment_id: chosen } = JSON.parse(call) as { payment_id?: string };
      return {
        ...reflection,
        adjustments: [
          ...reflection.adjustments,
          `add constraint: ask which payment method to use instead of taking ${chosen ?? "one"} from get_user_details`,
        ],
      };
    },
  };
  const at = (i: number) => `2026-11-20T10:00:0${String(i)}.000Z`;
  /** A customer-service run whose one booking call committed the wrong outcome, no error shown. */
  const booking = (n: number, user: string, words: string, paymentId: string) =>
    taskEvent({
      eventId: `evt-${String(n)}`,
      loopId: `loop-${String(n)}`,
      task: { description: `Airline customer service. The user opened with: ${words}` },
      outcome: "failure",
      error: {
        category: "task_failure",
        message: "The final reservation database did not match the expected outcome.",
      },
      events: [
        {
          eventId: "s0",
          type: "llm_response",
          timestamp: at(0),
          actor: "user",
          content: `${words} My user id is ${user}.`,
        },
        {
          eventId: "s1",
          type: "tool_call",
          timestamp: at(1),
          actor: "agent",
          toolName: "get_user_details",
          content: JSON.stringify({ user_id: user }),
        },
        {
          eventId: "s2",
          type: "tool_response",
          timestamp: at(2),
          actor: "agent",
          toolName: "get_user_details",
          content: JSON.stringify({ payment_methods: { [paymentId]: {} } }),
        },
        {
          eventId: "s3",
          type: "tool_call",
          timestamp: at(3),
          actor: "agent",
          toolName: "book_reservation",
          content: JSON.stringify({ user_id: user, payment_id: paymentId, cabin: "economy" }),
        },
      ],
    });

  it("reuses the lesson when the same user's call fails again with another value the agent chose, without a generator call", async () => {
    const { outcome, calls } = setup(naming);
    const first = await outcome(
      booking(1, "mia_li_3668", "Hi, book me the morning flight to Boston.", "credit_card_4421"),
    );
    expect(first.memory?.action).toBe("add");
    expect(first.reflection.learning).toMatch(
      /^Before `book_reservation`, work out `cabin` from what the user said and the records, or ask/,
    );
    expect(first.reflection.attribution?.action).toBe(
      "book_reservation(cabin,payment_id,user_id) for mia_li_3668",
    );
    const before = calls();
    const again = await outcome(
      booking(2, "mia_li_3668", "Hi, book me the morning flight to Boston.", "credit_card_9911"),
    );
    expect(again.memory?.action).toBe("reuse");
    expect(again.reflectionId).toBe(first.reflectionId);
    expect(calls()).toBe(before);
  });

  it("does not give another user's request the lesson because the tool coincides", async () => {
    const { outcome } = setup(naming);
    const first = await outcome(
      booking(1, "mia_li_3668", "Hi, book me the morning flight to Boston.", "credit_card_4421"),
    );
    const other = await outcome(
      booking(2, "omar_rossi_1241", "Hi, book me the morning flight to Boston.", "credit_card_4421"),
    );
    expect(other.memory?.action).toBe("add");
    expect(other.reflectionId).not.toBe(first.reflectionId);
  });
});
