import type { AttributionBasis, LocatedFailure } from "../attribution/located-failure.js";
import type { Reflection, TaskCompleted } from "../contracts/index.js";
import { findingFromEvaluation } from "../evaluation/reflection-from-evaluation.js";
import { classifyFailure, type FailureAnalysis, type FailureKind } from "./classify-failure.js";
import type { CallCheck } from "./call-mismatch.js";
import { decisiveStepLesson } from "./decisive-step-lesson.js";
import { identifierOf } from "./instruction-slots.js";

export interface HeuristicGuidance {
  attempt: number;
  violations: string[];
  missingFields: string[];
  insights?: string[];
  /** The self-evaluation of the agent's answer, when the task had one. */
  answerIssues?: string[];
  /** Where the trace failed, when the caller located it already (else it is located here). */
  located?: LocatedFailure | null | undefined;
  /** The checks of a state-changing call: the general ones, after any enabled domain pack's. */
  callChecks?: readonly CallCheck[];
}

/**
 * What the trace shows about the failure, and the lesson the failure's kind carries, when the trace
 * shows enough for one. `found` states only what the trace holds (the error, its numbers, how
 * often the call was made); no cause is claimed that the trace does not show.
 */
interface Lesson {
  found: string;
  adjustments: string[];
  learning: string;
  tags: string[];
}

/**
 * A trace's tool name as it may appear in a lesson's instructions: an identifier after NFKC
 * (`instruction-slots.ts`). Anything else (a command line, a URL, a sentence, letters of other
 * scripts, invisible characters) is the trace's text, quoted in the analysis at most.
 */
export function lessonName(name: string | undefined): string | undefined {
  return identifierOf(name);
}

/** Tools a success lesson names at most: a lesson is a short instruction, not the trace again. */
const maxLessonTools = 5;

const quote = (text: string, max = 160) => `"${text.length > max ? `${text.slice(0, max - 1)}…` : text}"`;

/**
 * The ids an error message names, as identifiers (`instruction-slots.ts`: letters, digits, `_-.:`,
 * with a digit; not a bare three-digit status, nor a long run of letters and digits that reads as
 * an encoded blob): what an instruction may carry of it, never its text.
 */
function idsNamedIn(message: string | undefined): string[] {
  // Split on what no id holds, then keep the tokens with a digit: linear on any text.
  const tokens = (message ?? "").slice(0, 2_000).split(/[^#\w.-]+/);
  return [...new Set(tokens)]
    .filter(
      (id) =>
        id.length <= 40 &&
        /\d/.test(id) &&
        !/^\d{3}$/.test(id) &&
        !/[A-Za-z0-9]{24}/.test(id) &&
        identifierOf(id) === id,
    )
    .slice(0, 3);
}

/**
 * What the trace shows and the executable adjustments of the failure's kind. The adjustments and
 * the learning are the generator's own words filled only with identifiers (a tool's name) and
 * numbers: the trace's text is quoted in what the trace shows, never in an instruction. Null when
 * the trace does not show what went wrong (a tool error with no telling message, or no error at
 * all), where any lesson would be a guess.
 */
function lessonFor(kind: FailureKind, a: FailureAnalysis, event: TaskCompleted): Lesson | null {
  const tool = lessonName(a.tool) ?? "the failing tool";
  // Numbers only (the trace's metadata read as numbers): an instruction's other slot.
  const n = a.numbers;
  switch (kind) {
    case "timeout": {
      const limit = n.timeoutMs;
      const rows = n.rows ? ` over an estimated ${n.rows} rows` : "";
      return {
        found: `${tool} ran past its ${limit ? `${limit} ms ` : ""}time limit${rows}${n.attempts > 1 ? ` on ${n.attempts} calls` : ""}`,
        adjustments: [
          `add constraint: ${tool} calls must filter on an indexed key and fetch pages with LIMIT 1000`,
          `set timeout_ms = ${limit ? limit * 2 : 60000} for ${tool} only while paginated batches are in place`,
          `change the fetch strategy from one full query to paginated batches, resuming from the last key on timeout`,
        ],
        learning: `Large reads through ${tool} must be bounded and paginated; a raised timeout alone only moves the failure.`,
        tags: ["timeout", "performance", tool],
      };
    }
    case "rate_limit": {
      const wait = n.retryAfterS ?? 30;
      return {
        found: `${tool} was rate limited (HTTP 429)${n.attempts > 1 ? ` and was called ${n.attempts} times` : ""}${n.retryAfterS !== undefined ? `; the response asked to wait ${wait}s (Retry-After)` : ""}`,
        adjustments: [
          `set retry_wait_s = ${wait} for ${tool} whenever the response carries Retry-After`,
          `add constraint: at most 2 retries of ${tool} per task, with jittered exponential backoff starting at ${wait}s`,
          `change retry policy from immediate retry to honouring Retry-After before the next ${tool} call`,
        ],
        learning: `Rate-limit responses from ${tool} carry the wait time; retrying before it elapses only burns quota and time.`,
        tags: ["rate-limit", "retry", tool],
      };
    }
    case "auth":
      return {
        found: `${tool} rejected the credentials${n.status ? ` (HTTP ${n.status})` : ""}${n.attempts > 1 ? `, and the call was made ${n.attempts} times` : ""}`,
        adjustments: [
          `add constraint: refresh the access token before calling ${tool} when it expires within 60 s`,
          `change handling of 401 responses from retrying the same request to one token refresh followed by a single retry`,
          `set max_auth_retries = 1 for ${tool}`,
        ],
        learning: `Authentication failures from ${tool} need a credential refresh, not a retry of the same request.`,
        tags: ["auth", "credentials", tool],
      };
    case "validation": {
      const detail = a.failingStep?.error?.message ?? event.error?.message ?? "the tool's input rules";
      return {
        found: `${tool} rejected its arguments: ${quote(detail, 100)}`,
        adjustments: [
          `add constraint: validate ${tool} arguments against the tool's schema before the call`,
          `change argument construction to convert relative or free-text values into the exact formats ${tool} requires (e.g. RFC 3339 date-times)`,
          `set max_identical_retries = 0 for ${tool} after a 400 response`,
        ],
        learning: `Arguments to ${tool} must be normalised to the documented format before the call; repeating a rejected call cannot succeed.`,
        tags: ["validation", "tool-arguments", tool],
      };
    }
    case "network":
      return {
        found: `${tool} lost its connection (${quote(a.failingStep?.error?.code ?? event.error?.code ?? "connection error", 40)})${n.attempts > 1 ? ` on ${n.attempts} attempts` : ""}`,
        adjustments: [
          `set max_retries = 3 with jittered backoff for ${tool}`,
          `add constraint: send an Idempotency-Key with every ${tool} POST so retries are safe`,
          `change the failure path from giving up to queueing the request for a later retry`,
        ],
        learning: `Transient network failures of ${tool} are expected; calls must be idempotent and retried with backoff.`,
        tags: ["network", "retry", tool],
      };
    case "not_found": {
      const answer = a.failingStep?.error?.message ?? event.error?.message;
      const ids = idsNamedIn(answer);
      return {
        found: `${tool} answered that what it was asked for does not exist${answer ? ` (${quote(answer, 100)})` : ""}`,
        adjustments: [
          `add constraint: look the resource up (list or search) before calling ${tool} with an id${ids.length ? `; this run asked for ${ids.join(", ")}` : ""}`,
          `change id handling for ${tool} to use only ids returned by a previous tool response`,
        ],
        learning: `Identifiers passed to ${tool} must come from earlier tool output, not from inference.`,
        tags: ["not-found", tool],
      };
    }
    case "resource_exhausted":
      return {
        found: `${tool} ran out of a resource (memory, context or quota)`,
        adjustments: [
          `add constraint: split inputs to ${tool} into chunks below 50% of its limit`,
          `set max_input_tokens = 8000 for ${tool}`,
        ],
        learning: `Inputs to ${tool} must be chunked below its limits; one oversized call fails outright.`,
        tags: ["resource-limit", tool],
      };
    case "parse_error":
      return {
        found: `the output of ${tool} could not be parsed`,
        adjustments: [
          `add constraint: validate ${tool} output against a schema and request a repair once on failure`,
          `set response_format = json_object for ${tool}`,
        ],
        learning: `Structured output from ${tool} must be validated before use, with one repair attempt.`,
        tags: ["parsing", tool],
      };
    case "conflicting_claim":
    case "unverified_claim": {
      const conflict = event.verificationResults?.find(
        (v) => v.status === "conflict" || v.status === "refuted",
      );
      const claim = event.verificationResults?.find((v) => v.status === "unverified");
      const what =
        conflict?.conflictReason ?? conflict?.claimText ?? claim?.claimText ?? "a claim in the answer";
      const claimIds = idsNamedIn(conflict?.claimText ?? claim?.claimText);
      return {
        found: `the answer stated ${quote(what, 140)}, ${kind === "conflicting_claim" ? "which verification found to contradict a source" : "which verification could not confirm"}`,
        adjustments: [
          `add constraint: every date, number and named fact in an answer must cite a source verified in this session`,
          `remove claims that verification marks as ${kind === "conflicting_claim" ? "conflicting" : "unverified"} before the answer is returned${claimIds.length ? `; this run's claim held ${claimIds.join(", ")}` : ""}`,
          `change the answer workflow from draft-then-verify to verify-then-draft for factual questions`,
        ],
        learning: `Factual answers must be grounded in verified sources; conflicting or unverified claims are dropped or flagged.`,
        tags: ["factuality", "verification", kind === "conflicting_claim" ? "conflict" : "unverified-claim"],
      };
    }
    case "wrong_choice": {
      const goal = event.task.goal ?? event.task.description;
      return {
        found: `the agent's choice did not serve the goal ${quote(goal, 120)}${event.scores?.alignment !== undefined ? ` (alignment ${event.scores.alignment})` : ""}`,
        adjustments: [
          `add constraint: rank options by the user's stated priority before price`,
          `change the selection criterion from lowest price to the goal's stated priority`,
          `filter candidates where rating < 8 when the user asks for quality`,
        ],
        learning: `Choices must be ranked by what the user asked for; a budget-first default conflicts with a stated quality preference.`,
        tags: ["decision-making", "user-preference", "alignment"],
      };
    }
    case "quality":
      return {
        found: event.evaluation?.critique
          ? `the first draft fell short of the task (the evaluator's critique: ${quote(event.evaluation.critique, 140)})`
          : `the output drifted from the task${event.scores?.drift !== undefined ? ` (drift ${event.scores.drift})` : ""}`,
        adjustments: [
          `add constraint: check each section of the output against the goal before returning it`,
          `set min_alignment = 0.75 as the bar before a loop may finalize`,
        ],
        learning: `Outputs must be checked against the goal before they are returned; looking complete is not being aligned.`,
        tags: ["quality", "alignment"],
      };
    case "tool_error":
    case "unknown":
      return null;
  }
}

const basisReasons: Record<Exclude<AttributionBasis, "explicit_error" | "no_steps">, string> = {
  message_match: "it holds the task's error message",
  claim_match: "it first states the claim that verification rejected",
  failure_text: "its output reports a failure the agent did not recover from",
  repetition: "the agent repeated it word for word afterwards, stuck from there on",
  first_state_change: "this first call that changed state committed the run to the wrong outcome",
  structural_fallback: "a rule that ignores the trace's content chose it, not a finding",
};

/** A step's text as quoted evidence: in backticks when it holds double quotes (JSON arguments). */
const quoteEvidence = (text: string) =>
  text.includes('"') && !text.includes("`")
    ? `\`${text.length > 140 ? `${text.slice(0, 139)}…` : text}\``
    : quote(text, 140);

/** Where the trace went wrong and who did it, when no explicit failing step already says so. */
function attributionSentence(located: LocatedFailure, event: TaskCompleted): string {
  const a = located.attribution;
  // A fallback is a rule that ignores the trace's content: the attribution carries it, at its low
  // confidence, but the analysis does not present it as a finding.
  if (
    located.basis === "explicit_error" ||
    located.basis === "no_steps" ||
    located.basis === "structural_fallback" ||
    located.stepIndex === undefined
  )
    return "";
  const who = [a.actor, a.toolName ? `on ${a.toolName}` : undefined].filter(Boolean).join(" ");
  // The evidence is quoted only when it is the step's own text; otherwise it is the rule's words.
  const step = event.events[located.stepIndex];
  const evidence = a.evidence ?? "";
  const quoted = step && evidence && step.content.includes(evidence.replace(/…$/, ""));
  return (
    `The attribution rules point at step ${String(located.stepIndex)} (${a.eventId ?? "?"}${who ? `, ${who}` : ""}): ` +
    `${quoted ? quoteEvidence(evidence) : evidence}; ${basisReasons[located.basis]} (attribution confidence ${a.confidence.toFixed(2)}).`
  );
}

function successReflection(event: TaskCompleted): Reflection {
  const tools = [
    ...new Set(event.events.map((e) => lessonName(e.toolName)).filter((t): t is string => Boolean(t))),
  ].slice(0, maxLessonTools);
  const cacheHit = event.events.find(
    (e) => e.metadata?.cache_hit === true || e.metadata?.cache === "hit" || /cache hit/i.test(e.content),
  );
  const latencies = event.events
    .map((e) => e.metadata?.latency_ms)
    .filter((v): v is number => typeof v === "number");
  const fastest = latencies.length ? Math.min(...latencies) : undefined;
  const what = cacheHit
    ? `a cache hit (${quote(cacheHit.content, 80)}) avoided recomputation`
    : `the sequence ${tools.join(" → ") || "of steps"} reached the goal without errors`;
  return {
    reflectionText:
      `The task ${quote(event.task.description, 100)} succeeded: ${what}` +
      `${fastest !== undefined ? `, with the fastest step at ${fastest} ms` : ""}.`,
    strategyText: cacheHit
      ? `Check the cache before computing for repeated requests; it cut the work to ${fastest ?? "a few"} ms.`
      : `Reuse the tool sequence ${tools.join(" → ")} for tasks like this one.`,
    importance: Math.min(1, (event.task.importance ?? 0.5) * 0.9),
    confidence: cacheHit || fastest !== undefined ? 0.7 : 0.5,
    tags: ["success", "best-practice", ...(cacheHit ? ["caching"] : []), ...tools],
    errorCategory: null,
    patterns: cacheHit ? [`cache hit on ${tools[0] ?? "lookup"}`] : [`success with ${tools.join(" ")}`],
    adjustments: cacheHit
      ? [`set cache_first = true for ${tools[0] ?? "lookups"} on repeated requests`]
      : [`add constraint: use ${tools.join(" then ") || "the same steps"} for tasks of this kind`],
    learning: `What worked here (${cacheHit ? "cache first" : tools.join(", ")}) is a reusable pattern for tasks of this kind.`,
  };
}

/**
 * The offline generator: reads the trace, classifies the failure, finds the failing step and
 * what led to it, and states what it found (step, agent, tool, value, error) with the executable
 * adjustments of the failure's kind, filled with the trace's own numbers. It claims no cause the
 * trace does not show: when the trace holds no telling error, it says so and writes no lesson
 * (no adjustments, no learning), which the quality rules do not store. Deterministic. On retries
 * it uses the validator's feedback (restates the goal when relevance was low).
 */
export function generateHeuristicReflection(event: TaskCompleted, guidance?: HeuristicGuidance): Reflection {
  if (event.outcome === "success" && !findingFromEvaluation(event)) return successReflection(event);
  const analysis = classifyFailure(event, guidance?.located ?? undefined);
  // No explaining error: a lesson about the decisive call, when the trace shows one.
  const decisiveReading = analysis.failingStep
    ? null
    : decisiveStepLesson(analysis.located, event, guidance?.callChecks);
  const reading = decisiveReading;
  const decisive = decisiveReading?.lesson ?? null;
  const lesson = lessonFor(analysis.kind, analysis, event) ?? reading?.lesson ?? null;
  const step = analysis.failingStep;
  const led = analysis.precedingStep;
  const retry = guidance && guidance.attempt > 1 ? guidance : undefined;
  const feedback = (retry?.violations ?? []).join(" ");

  const sentences = [
    `Task ${quote(event.task.description, 120)}${event.task.goal ? ` (goal: ${quote(event.task.goal, 120)})` : ""} ended as ${event.outcome}.`,
    step
      ? `The failing step was ${step.eventId} (${step.type}${step.toolName ? ` on ${step.toolName}` : ""}${analysis.located.attribution.actor ? `, by ${analysis.located.attribution.actor}` : ""}): ${quote(step.error?.message ?? step.content, 140)}.`
      : "",
    attributionSentence(analysis.located, event),
    led ? `It followed the call ${led.eventId}: ${quote(led.content, 140)}.` : "",
    lesson
      ? `What the trace shows: ${lesson.found}. Evidence: ${analysis.evidence
          .slice(0, 3)
          .map((e) => quote(e, 200))
          .join("; ")}.`
      : reading
        ? `What the trace shows: ${reading.found}. It does not show what was wrong there${event.error ? ` (the error says only ${quote(event.error.message, 120)})` : ""}: no cause is claimed and no lesson is written.`
        : `The trace does not show why the task failed${event.error ? ` (its error says only ${quote(event.error.message, 120)})` : ""}: no cause is claimed and no lesson is written.`,
  ];
  if (guidance?.answerIssues?.length)
    sentences.push(`Self-evaluation of the answer found: ${guidance.answerIssues.slice(0, 3).join("; ")}.`);
  if (/relevan/i.test(feedback) && event.task.goal)
    sentences.push(`The goal was ${quote(event.task.goal, 160)}.`);
  if (retry?.insights?.length)
    sentences.push(`Known recurring issues: ${retry.insights.slice(0, 3).join("; ")}.`);

  // A hypothesis that later episodes confirm or not: the failure's kind on its tool.
  const patterns =
    decisive && lesson === decisive
      ? decisive.patterns
      : lesson
        ? [
            lessonName(analysis.tool)
              ? `${analysis.kind.replace(/_/g, " ")} on ${analysis.tool}`
              : analysis.kind.replace(/_/g, " "),
          ]
        : [];
  const confidence = lesson ? Math.min(0.9, 0.55 + 0.1 * analysis.evidence.length) : 0.3;
  const base = event.task.importance ?? 0.6;
  const importance = Math.min(
    1,
    base + (event.outcome === "failure" || event.outcome === "error" ? 0.2 : 0.1),
  );

  return {
    reflectionText: sentences.filter(Boolean).join(" "),
    strategyText: lesson?.adjustments[0]
      ? `${lesson.learning} First step: ${lesson.adjustments[0]}.`
      : (lesson?.learning ?? null),
    importance: Math.round(importance * 100) / 100,
    confidence: Math.round(confidence * 100) / 100,
    tags: [...new Set([...(lesson?.tags ?? [analysis.kind]), event.outcome])],
    errorCategory: event.error?.category ?? analysis.kind,
    patterns,
    adjustments: lesson?.adjustments ?? [],
    learning: lesson?.learning ?? "",
    ...(event.outcome !== "success" ? { attribution: analysis.located.attribution } : {}),
  };
}
