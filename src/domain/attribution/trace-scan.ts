import type { TraceEvent } from "../contracts/index.js";

/**
 * Linear-time reading of trace text for failure attribution. A step's content is untrusted and
 * may be a megabyte long, so nothing here uses a regular expression that can backtrack: searches
 * are `indexOf` loops with a bounded needle, and every helper is one pass over its input.
 */

export const evidenceMaxChars = 200;
/** Needles longer than this are cut: `indexOf` stays O(content × needle) with a constant needle. */
const needleMaxChars = 80;

/** Whitespace runs collapsed to one space, trimmed. One pass. */
export function collapseWhitespace(text: string): string {
  let out = "";
  let pendingSpace = false;
  let runStart = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    // \t \n \v \f \r and space; other Unicode spaces are rare in traces and harmless to keep.
    if (code === 32 || (code >= 9 && code <= 13)) {
      if (i > runStart) out += (pendingSpace && out.length > 0 ? " " : "") + text.slice(runStart, i);
      pendingSpace = true;
      runStart = i + 1;
    }
  }
  if (text.length > runStart) out += (pendingSpace && out.length > 0 ? " " : "") + text.slice(runStart);
  return out;
}

/** Lower-cased, whitespace runs collapsed to one space, trimmed. */
export function normalise(text: string): string {
  return collapseWhitespace(text.toLowerCase());
}

/** A search phrase from a message: normalised, at most 80 characters; null when too short to mean much. */
export function needleOf(message: string | undefined, minChars = 12): string | null {
  if (message === undefined) return null;
  const needle = normalise(message.slice(0, needleMaxChars * 4))
    .slice(0, needleMaxChars)
    .trim();
  return needle.length >= minChars ? needle : null;
}

/** Text squeezed to one line and at most `max` characters, with an ellipsis when cut. */
export function squeeze(text: string, max = evidenceMaxChars): string {
  // Only a window of the text is ever normalised, so a 1 MB step costs no more than a short one.
  const flat = collapseWhitespace(text.slice(0, max * 4));
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A quote of `text` around position `at`, at most 200 characters. */
export function quoteAround(text: string, at: number, max = evidenceMaxChars): string {
  const start = Math.max(0, at - Math.floor(max / 4));
  const window = text.slice(start, start + max * 2);
  const body = squeeze(window, max - (start > 0 ? 1 : 0));
  return start > 0 ? `…${body}` : body;
}

export interface Cue {
  /** Lower-case phrase. */
  text: string;
  /** Whether a letter may come right before it (`TypeError`, `NullPointerException`). */
  glued?: boolean;
}

/** Phrases of something having failed: an error, an exception, a traceback. */
export const failureCues: readonly Cue[] = [
  { text: "traceback" },
  { text: "exception", glued: true },
  { text: "error", glued: true },
  { text: "failed" },
];

const isLetter = (code: number) => (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code > 127;

/** "no error", "without errors", "0 errors": a cue that says the opposite. */
function negated(lower: string, at: number): boolean {
  const before = lower.slice(Math.max(0, at - 8), at);
  return before.endsWith("no ") || before.endsWith("without ") || before.endsWith(" 0 ");
}

/**
 * The first place in `lower` (already lower-cased) where one of `cues` occurs on a word boundary
 * and is not negated. Each cue is searched with `indexOf` from where the last try stopped, so the
 * cost is O(text × cues).
 */
export function firstCue(lower: string, cues: readonly Cue[]): { at: number; cue: string } | null {
  let best: { at: number; cue: string } | null = null;
  for (const cue of cues) {
    let from = 0;
    for (;;) {
      const at = lower.indexOf(cue.text, from);
      if (at < 0 || (best && at >= best.at)) break;
      from = at + 1;
      const before = at > 0 ? lower.charCodeAt(at - 1) : 32;
      const after = at + cue.text.length < lower.length ? lower.charCodeAt(at + cue.text.length) : 32;
      if (isLetter(after) && !(after === 115 && cue.glued)) continue; // "errors" yes, "errorless" no
      if (isLetter(before) && !cue.glued) continue;
      if (negated(lower, at)) continue;
      best = { at, cue: cue.text };
      break;
    }
  }
  return best;
}

/** FNV-1a over the UTF-16 code units: a cheap, allocation-free fingerprint for repeats. */
export function fingerprint(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Whether a step has more than a few characters of non-whitespace text. */
export function isSubstantive(step: TraceEvent, minChars = 20): boolean {
  if (step.content.length < minChars) return false;
  let seen = 0;
  for (let i = 0; i < step.content.length && seen < minChars; i += 1) {
    const code = step.content.charCodeAt(i);
    if (!(code === 32 || (code >= 9 && code <= 13))) seen += 1;
  }
  return seen >= minChars;
}
