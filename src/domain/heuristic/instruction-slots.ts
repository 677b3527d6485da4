/**
 * The slots of the offline generator's instructions (strategy, learning, adjustments, patterns,
 * tags). An instruction is the generator's own words; what it takes from a trace is only an
 * identifier (a tool's, an argument's or an agent's name, a step number, an error code) or a
 * number (read as a number). Every identifier that fills a slot goes through one of these
 * functions: a value that is not an identifier is replaced by a neutral word of the generator's,
 * so no trace text (an error message, a tool's output, an agent's message, a policy sentence, the
 * user's words) can become advice. The trace's text is quoted only in what the trace shows (the
 * analysis), as evidence.
 */

/** An identifier, read after NFKC: ASCII letters, digits, `_.:-`, at most 64 characters. */
const identifierShape = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Names that look like identifiers but are what a command line holds: a flag, a script or binary, a bare dot path. */
const notAName = /^[-.:]|\.(?:sh|bash|zsh|ps1|bat|cmd|exe|dll|vbs|py|pl|rb|js)$|\.\./i;

/**
 * The value as an identifier (its NFKC form), or undefined when it is not one: a sentence, a path,
 * a command line, a URL, a word with letters of other scripts or with invisible characters.
 */
export function identifierOf(value: string | number | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  const normal = value.normalize("NFKC");
  return identifierShape.test(normal) && !notAName.test(normal) && /[A-Za-z0-9]/.test(normal)
    ? normal
    : undefined;
}

/** An identifier slot: the value when it is one, else the neutral words given ("the failing tool"). */
export const identifier = (value: string | number | undefined | null, neutral: string): string =>
  identifierOf(value) ?? neutral;

/**
 * A short phrase of identifiers (a kind of value the generator named from an id such as
 * `gift_card_7719`, a criterion such as "arriving before 07:00", a cabin class): kept when it has at
 * most 6 words, each an identifier, else the neutral words given. Only for phrases the generator
 * itself composed from a trace's identifiers and numbers, never for a trace's sentence.
 */
export function phrase(value: string | undefined, neutral: string): string {
  if (value === undefined) return neutral;
  const words = value.normalize("NFKC").split(" ");
  return words.length <= 6 && words.every((w) => identifierOf(w) !== undefined) ? words.join(" ") : neutral;
}
