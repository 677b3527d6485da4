/**
 * Words a new task shares with the task a lesson was written for, weighed by how rare each is
 * among the tenant's lessons. Meaning alone (the embedder) puts every task of one domain near
 * every lesson of that domain: on real airline tasks a request about a delayed flight scored as
 * close to the flight-change lessons as a request to change a flight did. A lesson is therefore
 * served only when the two tasks also share words that few of the tenant's lessons have (a
 * "cancel", a "passenger", a "book"), not only the domain's common ones ("flight", "user").
 * Measured by `npm run bench -- lessons-for-task` (docs/benchmarks.md).
 */

/**
 * A word's information over N lessons: ln((N + ½) / (df + ½)), an inverse document frequency that
 * is 0 for a word every lesson has, so that a long text the tenant's tasks all share (a template
 * such as "Airline customer service: help the user…") adds up to nothing, however many lessons.
 */
function information(count: number, df: number): number {
  return Math.max(0, Math.log((count + 0.5) / (df + 0.5)));
}

/**
 * The least information shared words must carry, in nats, tuned on the tune split of the
 * benchmark; capped by that of one word found in a single lesson, so that a tenant with few
 * lessons (where no word can be rare) is not left with none.
 */
export const sharedWordsMinNats = 1.125;

/**
 * English function words, which say nothing about what a task is: pronouns, determiners and
 * quantifiers, auxiliaries and modals, prepositions, conjunctions, question words, common
 * adverbs of degree and time, the remains of contractions (`don't` reads as "don"), and greetings
 * and politeness. A general list (of the kind search engines leave out), fixed beforehand and not
 * grown from the benchmark's misses: among a tenant's few lessons such a word is as rare as a
 * "cancel" and would count as much. Words of one or two letters are not read at all.
 */
export const functionWords: ReadonlySet<string> = new Set(
  [
    // pronouns
    "you your yours yourself yourselves him his himself her hers herself its itself",
    "our ours ourselves they them their theirs themselves myself mine",
    "someone somebody something anyone anybody anything everyone everybody everything",
    "nobody nothing none",
    // determiners and quantifiers
    "the this that these those some any each every all both either neither few many much more",
    "most less least other others another such own same several enough",
    // auxiliaries and modals
    "are was were been being have has had having does did doing done",
    "will would shall should can could may might must ought",
    // remains of contractions
    "don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn",
    // prepositions
    "about above across after against along among around before behind below beneath beside",
    "besides between beyond but down during except for from inside into near off onto out",
    "outside over past per since than through throughout till toward towards under underneath",
    "until upon with within without via",
    // conjunctions
    "and nor yet because while whereas although though whether unless once",
    // question words and relatives
    "what which who whom whose when where why how whatever whichever whoever",
    // adverbs of degree, time and place
    "also just only very too quite rather really even still already again ever never not",
    "now then here there soon often always sometimes perhaps maybe",
    // greetings and politeness
    "hello hey hiya greetings dear please kindly thank thanks thx cheers regards sorry",
    "yes yeah okay",
  ]
    .join(" ")
    .split(" "),
);

/**
 * The words of a text: letters only, lower case, three or more, English function words left out,
 * common English endings cut.
 */
export function wordsOf(text: string): string[] {
  const out = new Set<string>();
  for (const match of text.toLowerCase().matchAll(/\p{L}{3,}/gu)) {
    const word = match[0];
    if (functionWords.has(word)) continue;
    out.add(word.length > 4 ? word.replace(/(?:ing|ed|es|s)$/, "") : word);
  }
  return [...out];
}

/**
 * The task part of a lesson's stored episode text (`episodeText` in src/domain/memory/trace-text.ts):
 * the task's description and goal, which come before its `outcome:` line.
 */
export function taskOfEpisode(episode: string): string {
  const end = episode.indexOf("\noutcome: ");
  return end < 0 ? episode : episode.slice(0, end);
}

/** How many of a tenant's lessons have each word, kept up to date as lessons come and go. */
export class WordRarity {
  private readonly df = new Map<string, number>();
  private lessons = 0;

  add(words: readonly string[]): void {
    this.lessons += 1;
    for (const w of words) this.df.set(w, (this.df.get(w) ?? 0) + 1);
  }

  remove(words: readonly string[]): void {
    this.lessons = Math.max(0, this.lessons - 1);
    for (const w of words) {
      const n = (this.df.get(w) ?? 0) - 1;
      if (n > 0) this.df.set(w, n);
      else this.df.delete(w);
    }
  }

  /** Nats the task's words share with a lesson's task words. */
  shared(taskWords: ReadonlySet<string>, lessonWords: readonly string[]): number {
    let sum = 0;
    for (const w of lessonWords) if (taskWords.has(w)) sum += information(this.lessons, this.df.get(w) ?? 0);
    return sum;
  }

  /** The bar shared words must reach: `maxNats`, or less while no word can be that rare. */
  minShared(maxNats = sharedWordsMinNats): number {
    return Math.min(maxNats, information(this.lessons, 1));
  }
}
