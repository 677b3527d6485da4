/**
 * The user-feedback override (docs/specification.md#feedback-override). The judged score stays
 * recorded as it was; what changes is the *effective* quality that queries rank by and that decides
 * whether a lesson is still served.
 *
 * Which feedback wins when a lesson has both 👍 and 👎: the latest one (by the time the user gave
 * it, ties broken by feedback id): a later rating is the user's newer judgement of the same lesson;
 * counting votes would let an old majority outweigh what users think now. The counts are still kept
 * and shown.
 */

export type Rating = "up" | "down";

/** 👎 caps the effective quality here. */
export const thumbsDownQualityCap = 0.3;
/** 👍 raises the effective quality to at least this. */
export const thumbsUpQualityFloor = 0.7;
/**
 * A lesson whose effective quality is below this is withheld: still counted and searchable by
 * signature, but not handed out as advice. 0.5 is the answer self-evaluation's "quality too low,
 * retry" line, so a 👎 (0.3) always withholds and a 👍 (≥ 0.7) always serves.
 */
export const servedMinQuality = 0.5;

export interface FeedbackVote {
  feedbackId: string;
  rating: Rating;
  at: Date;
}

/** The vote that decides the effective quality, or null when there is none. */
export function decidingVote(votes: readonly FeedbackVote[]): FeedbackVote | null {
  let latest: FeedbackVote | null = null;
  for (const vote of votes) {
    if (
      latest === null ||
      vote.at.getTime() > latest.at.getTime() ||
      (vote.at.getTime() === latest.at.getTime() && vote.feedbackId > latest.feedbackId)
    ) {
      latest = vote;
    }
  }
  return latest;
}

/** The judged score moved by the deciding rating: min(q, 0.3) for 👎, max(q, 0.7) for 👍. */
export function effectiveQuality(judgedQuality: number, rating: Rating | null): number {
  if (rating === "down") return Math.min(judgedQuality, thumbsDownQualityCap);
  if (rating === "up") return Math.max(judgedQuality, thumbsUpQualityFloor);
  return judgedQuality;
}

export function isServed(quality: number): boolean {
  return quality >= servedMinQuality;
}
