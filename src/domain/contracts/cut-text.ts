/**
 * Long texts inside a trace are cut, not refused: a web page or a terminal dump of 80,000
 * characters is an ordinary step of a browsing or coding agent, and refusing it would send the
 * whole trace to the dead-letter topic. The head and the tail are kept (the start says what the
 * step was, the end is where tracebacks and verdicts sit) around a marker that says how much was
 * left out, so no reader mistakes the cut text for the original.
 */

/**
 * Longest `content` (and `error.message`) of one trace step that is kept whole. It is the limit
 * the contract enforced before steps were cut, so every event that was valid then is read exactly
 * as before (same text, same error signature); only steps that used to get the whole event
 * dead-lettered are cut now. What reaches a model is bounded separately, by the prompt's token
 * budget.
 */
export const traceStepTextMaxChars = 64_000;

const thousands = new Intl.NumberFormat("en-US");

/** The marker left where text was cut, e.g. `…[cut 24,180 characters]…`. */
export function cutMarker(cutChars: number): string {
  return `\n…[cut ${thousands.format(cutChars)} characters]…\n`;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * `text` if it fits in `maxChars`, else its head and tail around a cut marker, `maxChars` long at
 * most in all. Never splits a surrogate pair. Linear in the length of `text`.
 */
export function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // The marker's length depends on the number it shows; the widest possible number bounds it.
  const room = Math.max(0, maxChars - cutMarker(text.length).length);
  let headEnd = Math.ceil(room / 2);
  let tailStart = text.length - (room - headEnd);
  if (headEnd > 0 && isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd -= 1;
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;
  const cut = cutMarker(tailStart - headEnd);
  if (room === 0) return cut.trim().slice(0, maxChars);
  return `${text.slice(0, headEnd)}${cut}${text.slice(tailStart)}`;
}
