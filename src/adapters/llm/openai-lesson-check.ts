import { randomBytes } from "node:crypto";
import type OpenAI from "openai";
import { within } from "../../domain/within.js";
import type { LessonCheck } from "../../pipeline/ports.js";
import { askJsonChat } from "./json-chat.js";
import { lessonCheckMessages, readLessonCheck } from "./lesson-check-prompt.js";
import type { LlmCallPolicy } from "./llm-call.js";

export interface OpenAiLessonCheckOptions extends LlmCallPolicy {
  client: OpenAI;
  model: string;
  /**
   * The longest an agent waits for the check, queueing for a slot included
   * (`LESSONS_FOR_TASK_CHECK_TIMEOUT_MS`); then meaning answers. The request's own timeout is the
   * policy's `timeoutMs`.
   */
  deadlineMs: number;
  randomToken?: () => string;
  /** `max_completion_tokens` of each request; a list of numbers needs few. */
  maxOutputTokens?: number;
}

/**
 * The lesson check by a model, for "lessons for a task": one request per task, asked once. An
 * agent waits for the answer, so an unusable one is not asked again, and an outage (timeout, open
 * circuit, spent budget) or the deadline passing is no error of the request: all give null, and
 * the lessons are served by meaning alone.
 */
export function createOpenAiLessonCheck(options: OpenAiLessonCheckOptions): LessonCheck {
  const randomToken = options.randomToken ?? (() => randomBytes(8).toString("hex"));
  return {
    async applies(tenantId, task, candidates) {
      if (candidates.length === 0) return [];
      const messages = lessonCheckMessages(task, candidates, randomToken());
      const asked = askJsonChat(
        { ...options, tenantId, maxOutputTokens: options.maxOutputTokens ?? 256 },
        "openai lesson check",
        messages,
        (answer) => {
          const picked = readLessonCheck(answer, candidates.length);
          return { value: picked, usable: picked !== null };
        },
      ).catch(() => null);
      // A request still queued or running at the deadline goes on (its own timeout ends it); the
      // agent is answered without it.
      return within(asked, options.deadlineMs, null);
    },
  };
}
