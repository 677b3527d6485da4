/**
 * Words that say only that a task failed, not how. A platform that grades answers reports the
 * same sentence ("the final answer was judged incorrect") for every wrong answer of every
 * task; a signature built from it alone would file unrelated failures under one lesson.
 */
const genericWords = new Set(
  (
    "a an the this that it its is was were be been being has have had do does did not no " +
    "and or but of in on at to for by with as from than then got get gets " +
    "final answer answers response responses result results output outputs reply " +
    "judged marked evaluated graded deemed rated considered found checked " +
    "incorrect wrong false bad poor correct right invalid unacceptable inaccurate mismatch " +
    "match matches matched expected actual ground truth reference " +
    "fail fails failed failure failures error errors unsuccessful unsolved " +
    "task tasks run agent agents evaluation evaluator check score quality low " +
    "something went unknown unexpected internal general generic issue problem " +
    "n time uuid hex"
  ).split(" "),
);

/** The words of a message, lower-cased; linear in the input. */
function words(message: string): string[] {
  return message.toLowerCase().match(/[a-z][a-z_]*/g) ?? [];
}

/**
 * True when a failure message carries nothing beyond "it failed": every word is a generic
 * verdict word (numbers and masked ids do not count). Such a message cannot tell two root
 * causes apart, so the signature must come from where the trace went wrong instead.
 */
export function isLowInformationMessage(message: string): boolean {
  return words(message).every((word) => genericWords.has(word));
}
