/**
 * The shapes the client sends and returns, in camelCase (the API's snake_case, mapped at the
 * edge). Fields the client does not use are kept in answers under their camelCase names.
 */
import type { Lesson } from "./lessons.js";

/** A loop's decision as the loops API reports it. */
export interface LoopDecision {
  loopId: string;
  rootLoopId: string | null;
  decision: "rerun" | "finalize" | "halt";
  /** The loop id the rerun should report under (null unless `rerun`). */
  newLoopId: string | null;
  rerunCount: number;
  maxReruns: number | null;
  reason: string | null;
  reasonDetail: string | null;
  decidedAt: string | null;
  /** The lessons to apply on the rerun (empty unless the decision carries some). */
  lessons: Lesson[];
}

/** `POST /orchestrator/loop-complete`: an orchestrator's end-of-loop report. */
export interface LoopComplete {
  loopId: string;
  projectId?: string;
  rerunOf?: string;
  reflectionStatus?: "done";
  outcome?: "success" | "failure" | "partial" | "timeout" | "error";
  alignmentScore?: number;
  driftScore?: number;
  biasTags?: string[];
  orchestratorPersona?: string;
  reflectionPersona?: string;
  task?: string;
  overrideFatigue?: boolean;
  overrideMaxReruns?: boolean;
  overrideBy?: string | null;
}

export interface LoopCompleteAnswer {
  status: string;
  loopId: string;
  reflectionResult: Record<string, unknown>;
  decisionResult: {
    decision: "rerun" | "finalize" | "halt";
    newLoopId: string | null;
    rerunReason: string | null;
    rerunCount: number;
    maxReruns: number;
  } & Record<string, unknown>;
  [key: string]: unknown;
}

/** `GET /api/v1/reflections`: words that must all appear, tags that must all match, a page. */
export interface ReflectionsQuery {
  q?: string;
  project?: string;
  tags?: string[];
  minImportance?: number;
  /** Page size, 1 to 100 (the server's default 10). */
  limit?: number;
  offset?: number;
  includeWithheld?: boolean;
}

/** A stored lesson as the list shows it (the fields agents use; the others are kept too). */
export interface StoredLesson {
  id: string;
  strategyText?: string | null;
  learning?: string | null;
  reflectionText?: string | null;
  tags?: string[];
  effectiveQuality?: number;
  judgedQuality?: number;
  served?: boolean;
  [key: string]: unknown;
}

export interface ReflectionsPage {
  items: StoredLesson[];
  /** The next page's `offset`, null on the last page. */
  nextOffset: number | null;
}

/** A user's 👍/👎 on a lesson. */
export interface Feedback {
  reflectionId: string;
  rating: "up" | "down";
  comment?: string;
  /** The idempotency key: the same id again is counted once (the client makes one when absent). */
  feedbackId?: string;
  userId?: string;
}

export interface FeedbackAnswer {
  status: "recorded" | "duplicate";
  reflectionId: string;
  judgedQuality: number;
  effectiveQuality: number;
  served: boolean;
  [key: string]: unknown;
}

/**
 * What `POST /api/v1/reflect` answers: the run's reflection, verdict and the loop's decision as the
 * pipeline committed them; or, when the server's deadline passed first, `status: "pending"` with
 * the `outcomeUrl` to fetch them from.
 */
export interface ReflectAnswer {
  eventId: string;
  loopId?: string;
  /** `processed` by this call, `replayed` (reflected before), or `pending`. */
  status: "processed" | "replayed" | "pending";
  verdict?: "accepted" | "accepted_with_warnings" | "rejected" | null;
  reflectionId?: string | null;
  stored?: boolean;
  deduplicated?: boolean;
  occurrences?: number | null;
  qualityScore?: number | null;
  signature?: string | null;
  reflection?: {
    reflectionText: string;
    strategyText: string | null;
    learning: string;
    adjustments: string[];
    tags: string[];
    [key: string]: unknown;
  } | null;
  decision?: {
    decision: "rerun" | "finalize" | "halt";
    loopId: string;
    newLoopId: string | null;
    reason: string;
    lessons: Lesson[];
    [key: string]: unknown;
  } | null;
  outcomeUrl?: string;
  [key: string]: unknown;
}
