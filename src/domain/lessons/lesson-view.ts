import type { Attribution } from "../contracts/index.js";
import type { Rating } from "../feedback/effective-quality.js";
import type { LessonEffectiveness } from "../feedback/lesson-effectiveness.js";
import type { RecordMetadata } from "../memory/record-metadata.js";

/** A stored lesson as the read side shows it: the judged lesson, user feedback and effectiveness. */
export interface ReflectionView {
  id: string;
  signature: string;
  projectId: string;
  reflectionText: string;
  strategyText: string | null;
  learning: string;
  importance: number;
  confidence: number;
  /** The quality score the judge gave; feedback never changes it. */
  judgedQuality: number;
  /** The judged score after the feedback override (docs/specification.md#feedback-override); what ranking and serving use. */
  effectiveQuality: number;
  /** False when feedback pushed the effective quality below the serving floor. */
  served: boolean;
  verdict: string;
  tags: string[];
  errorCategory: string | null;
  /** Where the failure went wrong and which agent did it; null for successes and older lessons. */
  attribution: Attribution | null;
  occurrences: number;
  firstSeenAt: string;
  lastSeenAt: string;
  feedback: { helpful: number; harmful: number; latestRating: Rating | null };
  effectiveness: LessonEffectiveness;
  /** Full-text rank of the query words; null without a text query. */
  rank: number | null;
  /**
   * The lesson's strategy, stored as a memory of its own (docs/specification.md#strategy-importance):
   * its id and importance (the lesson's raised by 10 %); null when it has none, absent when the
   * store does not read it.
   */
  strategy?: { id: string; importance: number } | null;
  /**
   * What the lesson keeps of the event it was written for (docs/specification.md#the-records-metadata);
   * null for lessons stored before it was kept, absent when the store does not read it.
   */
  metadata?: RecordMetadata | null;
}

export interface ReflectionQuery {
  text?: string | undefined;
  /** Only lessons of this project; absent: every project of the tenant. */
  projectId?: string | undefined;
  tags: string[];
  minImportance: number;
  limit: number;
  offset: number;
  /** Also return lessons withheld by feedback (operators reviewing them). */
  includeWithheld?: boolean;
}
