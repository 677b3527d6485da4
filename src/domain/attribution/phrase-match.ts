import { attributionConfidence } from "./attribution-confidence.js";
import { locatedAt, type LocatedFailure } from "./located-failure.js";
import { needleOf, quoteAround } from "./trace-scan.js";
import type { TraceView } from "./trace-view.js";

/** At most this many unverified claims are looked for, so 500 of them cannot multiply the scan. */
const maxClaimsSearched = 10;

/** The first step holding `needle` (lower-cased), with a quote around it. */
export function findPhrase(view: TraceView, needle: string): { index: number; quote: string } | null {
  const { steps, lower, flat } = view;
  for (let i = 0; i < steps.length; i += 1) {
    const content = steps[i]?.content ?? "";
    const at = lower(i).indexOf(needle);
    if (at >= 0) return { index: i, quote: quoteAround(content, at) };
    // Same words, other line breaks: compare with whitespace collapsed.
    const flatAt = flat(i).indexOf(needle);
    if (flatAt >= 0) return { index: i, quote: quoteAround(flat(i), flatAt) };
  }
  return null;
}

/** Rule 2: the task error's message, quoted by a step. */
export function messageMatch(view: TraceView): LocatedFailure | null {
  const messageNeedle = needleOf(view.event.error?.message);
  const byMessage = messageNeedle ? findPhrase(view, messageNeedle) : null;
  if (!byMessage) return null;
  return locatedAt(
    view.steps,
    "message_match",
    byMessage.index,
    attributionConfidence.messageMatch,
    byMessage.quote,
  );
}

/** Rule 3 (and A1): a claim verification refuted or could not verify, where it was first stated. */
export function claimMatch(view: TraceView): LocatedFailure | null {
  for (const result of (view.event.verificationResults ?? []).slice(0, maxClaimsSearched)) {
    if (result.status === "verified") continue;
    const needle = needleOf(result.claimText);
    const byClaim = needle ? findPhrase(view, needle) : null;
    if (!byClaim) continue;
    return locatedAt(
      view.steps,
      "claim_match",
      byClaim.index,
      attributionConfidence.claimMatch,
      `${result.status} claim: ${byClaim.quote}`,
    );
  }
  return null;
}
