import { randomBytes } from "node:crypto";
import type OpenAI from "openai";
import { within } from "../../domain/within.js";
import type { LessonCheck } from "../../pipeline/lesson-check.js";
import { askJsonChat } from "./json-chat.js";
import { lessonCheckMessages, readLessonCheck } from "./lesson-check-prompt.js";
import type { LlmCallPolicy } from "./llm-call.js";
import { estimateChatTokens } from "./token-estimate.js";

/**
 * The tenant's token budget as the check uses it: `reserve` takes the request's tokens from the
 * window atomically, or refuses when they do not fit, before the request waits for anything.
 */
export interface LessonCheckBudget {
  reserve(tenantId: string, tokens: number): Promise<boolean>;
  record(tenantId: string, tokens: number): Promise<void>;
  release?(tenantId: string, tokens: number): Promise<void>;
}

export interface OpenAiLessonCheckOptions extends Omit<LlmCallPolicy, "spend"> {
  client: OpenAI;
  model: string;
  /**
   * The longest an agent waits for the check, queueing for a slot included
   * (`LESSONS_FOR_TASK_CHECK_TIMEOUT_MS`); then meaning answers and the request is aborted. The
   * request's own timeout is the policy's `timeoutMs`.
   */
  deadlineMs: number;
  /**
   * Checks that may wait for one of the check's slots (`LESSONS_FOR_TASK_CHECK_QUEUE`); beyond
   * that, meaning answers at once.
   */
  maxQueued?: number;
  budget?: LessonCheckBudget;
  randomToken?: () => string;
  /** `max_completion_tokens` of each request; a list of numbers needs few. */
  maxOutputTokens?: number;
}

/**
 * The lesson check by a model, for "lessons for a task": one request per task, asked once. An
 * agent waits for the answer, so an unusable one is not asked again, and an outage (timeout, open
 * circuit, spent budget, a full queue) or the deadline passing is no error of the request: all
 * give null, and the lessons are served by meaning alone.
 *
 * It is isolated from the pipeline's model calls, which its callers (any `read` key) must not be
 * able to stop: its breaker and slots are its own (the policy given here), its queue is bounded,
 * its tokens are reserved from the tenant's budget when it is admitted (so concurrent checks cannot
 * all pass a check of what was spent before any of them counts), and a check given up (the
 * deadline, or the agent gone: `signal`) is aborted, waiting or in flight.
 */
export function createOpenAiLessonCheck(options: OpenAiLessonCheckOptions): LessonCheck {
  const randomToken = options.randomToken ?? (() => randomBytes(8).toString("hex"));
  const maxOutputTokens = options.maxOutputTokens ?? 256;
  const { budget, slots, breaker } = options;
  return {
    async applies(tenantId, task, candidates, signal) {
      if (candidates.length === 0) return [];
      if (signal?.aborted) return null;
      if (breaker?.state() === "open") return null;
      if (slots && slots.inUse >= slots.size && slots.waiting >= (options.maxQueued ?? 16)) return null;
      const messages = lessonCheckMessages(task, candidates, randomToken());
      const reserved = estimateChatTokens(messages) + maxOutputTokens;
      if (budget && !(await budget.reserve(tenantId, reserved).catch(() => false))) return null;
      // What the call itself counts (its estimate, then the reported usage) goes to this ledger;
      // the budget holds the reservation until the call ends, then is set to what was spent.
      let spent = 0;
      const ledger = {
        record: (_tenant: string, tokens: number) => {
          spent += tokens;
          return Promise.resolve();
        },
        release: (_tenant: string, tokens: number) => {
          spent -= tokens;
          return Promise.resolve();
        },
      };
      const abort = new AbortController();
      const onGone = () => {
        abort.abort();
      };
      signal?.addEventListener("abort", onGone, { once: true });
      const call = { settled: false };
      const asked = askJsonChat(
        {
          ...options,
          tenantId,
          maxOutputTokens,
          signal: abort.signal,
          ...(budget ? { spend: ledger } : {}),
        },
        "openai lesson check",
        messages,
        (answer) => {
          const picked = readLessonCheck(answer, candidates.length);
          return { value: picked, usable: picked !== null };
        },
      )
        .catch(() => null)
        .finally(() => {
          call.settled = true;
          signal?.removeEventListener("abort", onGone);
          if (!budget) return;
          const used = Math.max(0, Math.ceil(spent));
          if (used > reserved) void budget.record(tenantId, used - reserved).catch(() => undefined);
          else if (used < reserved) void budget.release?.(tenantId, reserved - used).catch(() => undefined);
        });
      const answer = await within(asked, options.deadlineMs, null);
      // Given up: a request still queued or in flight is aborted rather than left to run.
      if (!call.settled) abort.abort();
      return answer;
    },
  };
}
