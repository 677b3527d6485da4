/**
 * The JSON object in a model's answer. Asked for "only the JSON object", real models still wrap it:
 * a Markdown fence, a sentence before ("Here is the reflection:"), a remark after, or both. The
 * answer is untrusted text of any length, so nothing here is a regular expression that can
 * backtrack: a fence is taken off by position, and an object is found by one scan that tracks
 * strings and nesting.
 */

/**
 * The answer without a Markdown code fence around it (```json … ```). Written without a regular
 * expression anchored at the end: `\s*```$` backtracks over every run of whitespace, quadratic in
 * its length.
 */
export function withoutCodeFence(raw: string): string {
  let text = raw.trim();
  if (text.startsWith("```")) {
    text = text.slice(3);
    if (text.slice(0, 4).toLowerCase() === "json") text = text.slice(4);
    text = text.trimStart();
  }
  if (text.endsWith("```")) text = text.slice(0, -3).trimEnd();
  return text;
}

/**
 * The end (exclusive) of the balanced `{ … }` that starts at `start`, or -1. Braces inside JSON
 * strings do not count. One pass from `start`.
 */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 92)
        i += 1; // backslash: skip the escaped character
      else if (code === 34) inString = false;
      continue;
    }
    if (code === 34) inString = true;
    else if (code === 123) depth += 1;
    else if (code === 125) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** At most this many `{` are tried as the start of the object: prose rarely holds more. */
const maxStarts = 8;

/**
 * The text of the answer's JSON object: the whole answer (fence taken off) when it parses, else
 * the first balanced `{ … }` in it that parses as an object. When none does, the fenced-off answer,
 * so the caller reports the parser's own error.
 */
export function jsonObjectText(raw: string): string {
  const text = withoutCodeFence(raw);
  try {
    JSON.parse(text);
    return text;
  } catch {
    // Prose around the object, or no object at all: look for one.
  }
  let from = 0;
  for (let tries = 0; tries < maxStarts; tries += 1) {
    const start = text.indexOf("{", from);
    if (start < 0) break;
    from = start + 1;
    // Unbalanced to the end (a stray brace in prose): the next start may still close.
    const end = objectEnd(text, start);
    if (end < 0) continue;
    const candidate = text.slice(start, end);
    try {
      const value: unknown = JSON.parse(candidate);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) return candidate;
    } catch {
      // Not JSON (a brace in prose); try the next one.
    }
  }
  return text;
}
