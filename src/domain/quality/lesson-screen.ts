import type { Reflection } from "../contracts/index.js";

/**
 * What a lesson may not carry, whoever wrote it: a lesson is served to the tenant's agents as
 * guidance, so a trace that got a command, a link, a secret or an order to agents into it would
 * reach every agent. Such a lesson is quarantined: rejected, never stored, never served.
 *
 * The instructions (strategy, adjustments, learning, patterns, tags) are screened for all four. The
 * analysis is where the trace is quoted as evidence: a URL or a command there is what the trace
 * said; only credentials and orders to agents are refused in it.
 */
const url = /\b(?:https?|ftp|file|wss?|data|javascript):\/{0,2}\S|\bwww\.[a-z0-9-]+\.[a-z]{2,}/i;
const shell =
  /(?:^|[\s;&|(`'"])(?:curl|wget|sudo|chmod|chown|powershell|pwsh|iex|invoke-expression|nc\s+-[a-z]*e|rm\s+-[a-z]*[rf]|base64\s+(?:-d|--decode)|python3?\s+-c|bash\s+-c|sh\s+-c)\b|\|\s*(?:ba|z|k)?sh\b|\$\([^)]*\)|&&|;\s*(?:rm|curl|wget|sh|bash)\b/i;
const credential =
  /\bAKIA[0-9A-Z]{16}\b|\bsk-[A-Za-z0-9_-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|\b(?:password|passwd|secret|api[_-]?key|access[_-]?key|token|bearer)\b\s*[:=]?\s*(?=\S*\d)(?=\S*[A-Za-z])[A-Za-z0-9+/_\-.]{12,}/i;
export const instruction =
  /\b(?:system\s+(?:notice|message|prompt|override|instruction)s?|(?:to|for)\s+all\s+(?:agents|assistants|models)|(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|other)\s+(?:instructions|rules|guidance|lessons|prompts?)|new\s+instructions|you\s+(?:are\s+now|must\s+now)|do\s+not\s+tell\s+the\s+user)\b/i;
/**
 * Words about evading a model's guard: an order in the instructions, but in the analysis the name of
 * what the trace hit (a content filter's "jailbreak" verdict is a common, innocent error there).
 */
const evasion = /\b(?:developer\s+mode|jailbreak)\b/i;

/** Why a lesson must be quarantined (in the rules' own words, never the lesson's), or [] when none. */
export function screenLesson(
  reflection: Pick<
    Reflection,
    "reflectionText" | "strategyText" | "adjustments" | "learning" | "patterns" | "tags"
  >,
): string[] {
  const instructions = [
    reflection.strategyText ?? "",
    reflection.learning,
    ...reflection.adjustments,
    ...reflection.patterns,
    ...reflection.tags,
  ].join("\n");
  const analysis = reflection.reflectionText;
  const found: string[] = [];
  if (url.test(instructions)) found.push("a URL in its instructions");
  if (shell.test(instructions)) found.push("a shell command in its instructions");
  if (credential.test(instructions) || credential.test(analysis)) found.push("a credential");
  if (instruction.test(instructions) || evasion.test(instructions) || instruction.test(analysis))
    found.push("an instruction addressed to agents");
  return found;
}

/**
 * A string fit to quote back in a violation. Violations travel on the outcome topic and into the
 * generator's next prompt, so what the screen refuses in a lesson is named there, never quoted.
 */
export function quotable(text: string): string {
  const refused =
    url.test(text) ||
    shell.test(text) ||
    credential.test(text) ||
    instruction.test(text) ||
    evasion.test(text);
  return refused ? "[a string the lesson screen refuses]" : text;
}
