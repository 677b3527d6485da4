import type { TaskCompleted } from "../contracts/index.js";

/**
 * The answer self-evaluation (docs/specification.md#answer-self-evaluation): how sure, how relevant
 * and how complete an agent's answer is, what is wrong with it and what would make it better.
 * Quality is the mean of the three scores; below `retryBelow` (0.5) the loop should retry with a
 * different approach.
 */
import { AnswerEvaluation } from "../contracts/answer-evaluation.js";

export { AnswerEvaluation };

export const answerRetryBelow = 0.5;

const round = (value: number) => Math.round(value * 100) / 100;
const clamp = (value: number) => Math.min(1, Math.max(0, value));

/**
 * Quality = mean(confidence, relevance, completeness), shown to two decimals; retry when the mean
 * itself is below 0.5 (a mean of 0.4967 shows as 0.5 and still retries).
 */
export function finishEvaluation(parts: Omit<AnswerEvaluation, "quality" | "shouldRetry">): AnswerEvaluation {
  const mean = (parts.confidence + parts.relevance + parts.completeness) / 3;
  return { ...parts, quality: round(mean), shouldRetry: mean < answerRetryBelow };
}

const stopwords = new Set(
  (
    "a an and are as at be by can could did do does for from had has have how i if in into is it its " +
    "me my of on or our should so than that the their them then there these they this to was we were " +
    "what when where which who whom why will with would you your please tell give show list explain"
  ).split(" "),
);

/** Content words, cut to a 5-letter stem so "apply"/"applies" and "timeout"/"timeouts" meet. */
function contentStems(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((w) => w.length > 2 && !stopwords.has(w)).map((w) => w.slice(0, 5)));
}

const hedges =
  /\b(might|maybe|perhaps|possibly|probably|i think|i believe|not sure|unclear|it seems|appears to|roughly|around)\b/gi;
const nonAnswers =
  /\b(i (do not|don't|cannot|can't) (know|answer|help)|unable to (find|answer|determine)|no information|as an ai)\b/i;

/** Whether the task carries a question and an answer to judge (otherwise no evaluator runs). */
export function hasAnswerToJudge(event: Pick<TaskCompleted, "task">): boolean {
  return Boolean(event.task.query?.trim() && event.task.answer?.trim());
}

/**
 * The offline evaluator. It cannot judge truth; it reads what the event itself says: the
 * verification results (verified, unverified, conflicting claims), hedging in the answer,
 * whether the answer uses the question's terms, and whether it answers every part of it.
 */
export function evaluateAnswerHeuristically(
  event: Pick<TaskCompleted, "task" | "verificationResults" | "events">,
): AnswerEvaluation | null {
  const question = event.task.query?.trim();
  const answer = event.task.answer?.trim();
  if (!question || !answer) return null;
  const issues: string[] = [];
  const improvements: string[] = [];

  // Confidence: what verification found, then the answer's own hedging.
  let confidence = 0.9;
  const results = event.verificationResults ?? [];
  const conflicts = results.filter((r) => r.status === "conflict" || r.status === "refuted");
  const unverified = results.filter((r) => r.status === "unverified");
  if (conflicts.length > 0) {
    confidence -= 0.3 * conflicts.length;
    issues.push(
      `${conflicts.length} claim(s) contradicted by sources: ${conflicts
        .map((c) => c.claimText ?? c.conflictReason ?? "unspecified")
        .join("; ")
        .slice(0, 200)}`,
    );
    improvements.push("correct the contradicted claims from the primary source before answering");
  }
  if (unverified.length > 0) {
    confidence -= 0.15 * unverified.length;
    issues.push(`${unverified.length} claim(s) without a verified source`);
    improvements.push("cite a verified source for every factual claim, or drop the claim");
  }
  const hedgeCount = answer.match(hedges)?.length ?? 0;
  if (hedgeCount > 0) {
    confidence -= Math.min(0.3, 0.1 * hedgeCount);
    issues.push(`answer hedges ${hedgeCount} time(s)`);
    improvements.push("state what is known plainly and say what could not be confirmed");
  }
  if (event.events.some((e) => e.type === "error_event" || e.error !== undefined)) {
    confidence -= 0.1;
    issues.push("the trace contains errors the answer may rest on");
  }

  // Relevance: share of the question's content words the answer takes up.
  const asked = contentStems(question);
  const said = contentStems(answer);
  const covered = [...asked].filter((stem) => said.has(stem)).length;
  // Taking up 60% of the question's terms counts as fully on topic.
  let relevance = asked.size === 0 ? 1 : clamp(covered / asked.size / 0.6);
  if (nonAnswers.test(answer)) {
    relevance = Math.min(relevance, 0.2);
    issues.push("the answer declines or does not answer the question");
    improvements.push("retry with a different retrieval approach before declining");
  } else if (relevance < 0.6) {
    issues.push("the answer does not address most of the question's terms");
    improvements.push("answer the question as asked, using its own terms");
  }

  // Completeness: every question part answered, at a length proportionate to the question.
  const parts = Math.max(1, question.split("?").filter((p) => p.trim().length > 0).length);
  const conjunctions = question.match(/\b(and|also|as well as|from when|whether)\b/gi)?.length ?? 0;
  const expectedWords = Math.min(120, 15 * (parts + conjunctions));
  const answerWords = answer.split(/\s+/).length;
  let completeness = clamp(answerWords / expectedWords);
  if (/(\.\.\.|…)$/.test(answer) || !/[.!?)"'\]`]$/.test(answer)) {
    completeness = Math.max(0, completeness - 0.3);
    issues.push("the answer looks cut off");
    improvements.push("finish the answer; check output token limits");
  } else if (completeness < 0.7) {
    issues.push(`the answer is short (${answerWords} words) for a ${parts + conjunctions}-part question`);
    improvements.push("cover every part of the question");
  }

  return finishEvaluation({
    evaluator: "heuristic",
    confidence: round(clamp(confidence)),
    relevance: round(relevance),
    completeness: round(completeness),
    issues,
    improvements,
  });
}
