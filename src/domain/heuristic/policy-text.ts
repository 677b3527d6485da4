/**
 * The sentences of a policy (the system text of a tool-using agent) that speak of an action: the
 * ones under a markdown heading that names the action, or under none. Shared by the general
 * checks of a state-changing call and by the domain packs.
 */
export const stem = (word: string) =>
  word
    .toLowerCase()
    .replace(/(ages|age|ies|es|s|led|ed|d)$/, "")
    .slice(0, 5);
/** Two stems of one word: one begins the other (`bag` and `bagg` of baggages). */
export const sameStem = (a: string, b: string) =>
  a.length >= 3 && b.length >= 3 && (a.startsWith(b) || b.startsWith(a));
export const hasStem = (stems: string[], word: string) => stems.some((s) => sameStem(s, stem(word)));
export const wordsOf = (name: string) =>
  name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length >= 3);

/**
 * The policy's sentences that speak of this call: those under a heading that names its action
 * ("## Cancel flight" for `cancel_reservation`, "## Refund" for a certificate sent as a refund), or
 * under no heading. A rule under another action's heading is that action's ("Checked bag
 * allowance" under "## Book flight" is not a rule for adding bags later).
 */
const maxSentenceChars = 1_000;

export function policySentences(policy: string, actionWords: readonly string[]): string[] {
  return policySentencesByStem(policy, actionWords.map(stem));
}

/** Every sentence of the policy, whatever its heading (what a term such as "travel insurance" covers). */
export const allPolicySentences = (policy: string) => policySentencesByStem(policy, [], true);

export function policySentencesByStem(policy: string, actionStems: string[], everyHeading = false): string[] {
  const out: string[] = [];
  let applies = true;
  for (const line of policy.split(/\n+/)) {
    const heading = /^\s*#{2,}\s*(.+)$/.exec(line)?.[1];
    if (heading !== undefined) {
      applies = everyHeading || wordsOf(heading).some((w) => hasStem(actionStems, w));
      continue;
    }
    if (!applies) continue;
    for (const sentence of line.split(/(?<=[.!?])\s+/)) {
      const s = sentence.replace(/^[-*#\s]+/, "").trim();
      // A rule is a sentence, not a page: the shapes above are read only in sentences this long,
      // which also bounds what their patterns scan.
      if (s.length >= 20 && s.length <= maxSentenceChars) out.push(s);
    }
  }
  return out;
}
