import type { Reflection } from "../contracts/index.js";

/**
 * What a lesson's instructions may carry, whoever wrote them. A lesson is served to the tenant's
 * agents as advice, so a trace or a model that got a command, an address, a package to install, a
 * switch that turns off verification or an order to agents into one would reach every agent.
 *
 * The screen is an allow-list, read after the text is brought to one form: Unicode NFKC (full-width
 * and other compatibility letters become ASCII), every format character removed (zero-width, bidi
 * controls, soft hyphens), look-alike letters of other scripts read as the Latin ones they imitate,
 * and quotes inside a word removed (`c'u'r'l`). An instruction passes only when every character is a
 * letter, a digit, a space or plain punctuation, no word mixes scripts, and none of the shapes below
 * appears: the shapes are what the refused things look like whatever their spelling (any address,
 * any path, any flag), not a list of known payloads.
 *
 * An instruction that fails is refused alone: the rest of the lesson is judged without it
 * (`screenReflection`). Only what cannot be cut out of a lesson quarantines it whole: a credential
 * anywhere, or an order to agents in the analysis, where the trace is quoted as evidence.
 */

/** Why an instruction is refused, in the screen's own words (never the instruction's). */
export type RefusalReason =
  | "a character outside the lesson alphabet"
  | "a word mixing scripts"
  | "an address"
  | "an e-mail address"
  | "a path"
  | "a shell command"
  | "a package-manager command"
  | "a verification switch"
  | "an encoded payload"
  | "a credential"
  | "an instruction addressed to agents";

export interface RefusedInstruction {
  /** The instruction as written: for the caller's audit, never to quote on an outcome or in a prompt. */
  text: string;
  reason: RefusalReason;
}

export interface ScreenedInstructions {
  kept: string[];
  refused: RefusedInstruction[];
}

/** Format characters (zero-width, bidi controls, soft hyphen, tags) and other invisible code points. */
const invisible = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** Letters of other scripts drawn like Latin ones (Unicode's confusables, the ones that matter here). */
const lookAlikes: Readonly<Record<string, string>> = {
  // Cyrillic
  а: "a",
  в: "b",
  с: "c",
  ԁ: "d",
  е: "e",
  ҽ: "e",
  һ: "h",
  н: "h",
  і: "i",
  ї: "i",
  ј: "j",
  к: "k",
  ӏ: "l",
  м: "m",
  п: "n",
  о: "o",
  р: "p",
  ԛ: "q",
  г: "r",
  ѕ: "s",
  т: "t",
  ц: "u",
  ѵ: "v",
  ԝ: "w",
  х: "x",
  у: "y",
  ү: "y",
  ʐ: "z",
  ь: "b",
  // Greek
  α: "a",
  β: "b",
  ϲ: "c",
  ε: "e",
  η: "n",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  γ: "y",
  ω: "w",
  // Armenian and Latin extensions
  օ: "o",
  ս: "u",
  ց: "g",
  ո: "n",
  ɑ: "a",
  ɡ: "g",
  ı: "i",
  ȷ: "j",
  ℓ: "l",
};

/** The text brought to the one form the screen reads: NFKC, no invisible characters, lower case. */
export function normaliseForScreen(text: string): string {
  return text.normalize("NFKC").replace(invisible, "").toLowerCase();
}

/** Look-alike letters read as the Latin letters they imitate, quotes and carets inside words dropped. */
function skeleton(normalised: string): string {
  let out = "";
  for (const ch of normalised) out += lookAlikes[ch] ?? ch;
  return out.replace(/(?<=[\p{L}\p{N}])['"‘’“”^`]+(?=[\p{L}\p{N}])/gu, "");
}

/**
 * The lesson alphabet: letters and marks of any script, digits, spaces and plain punctuation.
 * Left out on purpose: `$` `{` `}` `|` `\` `^` `~` `@` and every symbol, the characters of shells,
 * templates and addresses that no advice needs (backticks stay: lessons quote names in them).
 */
const alphabet = /^[\p{L}\p{M}\p{Nd}\s.,;:!?'"‘’“”`()[\]\-–—_/%+=*#&<>…°]*$/u;

/** A word holding letters of two scripts (`pаypal` with a Cyrillic а). */
function mixesScripts(normalised: string): boolean {
  for (const word of normalised.split(/[^\p{L}\p{M}]+/u)) {
    const latin = /\p{Script=Latin}/u.test(word);
    const other = /[^\P{L}\p{Script=Latin}]/u.test(word);
    if (latin && other) return true;
  }
  return false;
}

const tld =
  "com|net|org|io|co|ai|app|dev|sh|xyz|ru|cn|su|tk|top|info|biz|uk|de|fr|nl|eu|ly|gg|cc|ws|pw|site|online|club|link|click|zip|mov|cloud|tech|store|shop|live|pro|icu|buzz|gq|ml|ga|cf|onion|jp|br|au|ca|se|ch|kz|ir|vn";

/** Shapes, tried in this order on the skeleton; the first that matches names the refusal. */
const shapes: readonly (readonly [RefusalReason, RegExp])[] = [
  [
    "a credential",
    /\bakia[0-9a-z]{16}\b|\bsk-[a-z0-9_-]{16,}|\bgh[pousr]_[a-z0-9]{20,}|\bxox[abprs]-[a-z0-9-]{10,}|\beyj[a-z0-9_-]{8,}\.[a-z0-9_-]{8,}|-----begin [a-z ]*private key-----|\b(?:password|passwd|secret|api[_-]?key|access[_-]?key|token|bearer)\b\s*[:=]?\s*(?=\S*\d)(?=\S*[a-z])[a-z0-9+/_\-.]{12,}/,
  ],
  [
    "an e-mail address",
    /@\s*[a-z0-9-]+\.[a-z]|[[({]\s*at\s*[\])}]|\bat\s+[a-z0-9-]+\s+dot\s+[a-z]{2,}\b|\bmailto:|\b(?:e-?mail|mail|exfiltrate|leak|upload)\b[^.]{0,60}\b(?:credentials?|secrets?|tokens?|api keys?|passwords?|env(?:ironment)?(?: variables| vars)?|ssh keys?|private keys?|cookies|session ids?)\b|\b(?:credentials?|secrets?|tokens?|api keys?|passwords?|env(?:ironment)? variables|private keys?)\b[^.]{0,60}\b(?:e-?mail|mail|inbox)\b/,
  ],
  [
    "a verification switch",
    /\b(?:disable|disabling|skip|skipping|turn(?:ing)? off|bypass|ignore|ignoring|without|no)\s+(?:\w+\s+){0,3}?(?:ssl|tls|https|certificates?|certs?|hostnames?|signatures?|checksums?|integrity|gpg|host ?keys?)\s*(?:verification|validation|checks?|checking|verify)\b|\binsecure\b|\btrust(?:ing)? all (?:certificates|certs|hosts)\b/,
  ],
  [
    "a package-manager command",
    /\b(?:pip[0-9.]*|pipx|npm|npx|pnpm|yarn|bunx?|gem|cargo|apt|apt-get|aptitude|yum|dnf|zypper|apk|brew|choco|winget|scoop|conda|mamba|micromamba|poetry|uv|composer|nuget|dotnet|easy_install)\s+(?:install|i|add|get|update|upgrade|exec|x|run|dlx|require|tool|sync|dl|require|sources)\b|\b(?:pip\d*|npx|pipx|bunx|easy_install|apt-get)\b|\b(?:pypi|npmjs|rubygems|crates\.io)\b|\binstall\s+(?:the\s+)?(?:package|module|library|dependency|gem|crate|wheel)\b/,
  ],
  [
    "a shell command",
    /\b(?:curl|wget|bash|sh|zsh|ksh|csh|tcsh|dash -c|powershell|pwsh|cmd\.exe|cmd \/c|iex|iwr|irm|invoke-expression|invoke-webrequest|invoke-restmethod|start-process|sudo|doas|su -|chmod|chown|chattr|rm|mkfs|dd if|nc|ncat|netcat|socat|telnet|ssh|scp|sftp|rsync|tftp|xxd|openssl|certutil|bitsadmin|mshta|rundll32|regsvr32|wscript|cscript|crontab|nohup|osascript|eval|exec|xargs|setsid|disown)\b|(?:^|\s)--?[a-z][a-z0-9-]*|&&|\|\||\|\s*\w|[<>]\s*&|&\s*>|\$\(|;\s*[a-z]+\s+-/,
  ],
  [
    "an address",
    new RegExp(
      [
        String.raw`:\s*\/\/`,
        String.raw`\bh(?:xx|\*\*|xt|tx)ps?\b`,
        String.raw`\b(?:https?|ftp|sftp|wss?|javascript|vbscript)\s*[:[]`,
        String.raw`\bdata:[a-z]+\/|\bfile:\/`,
        String.raw`[[({]\s*(?:\.|dot|:)\s*[\])}]`,
        String.raw`(?<![a-z0-9-])[a-z0-9-]+\s+dot\s+(?:${tld})\b`,
        String.raw`(?<![a-z0-9.-])(?:[a-z0-9][a-z0-9-]{0,62}\.)+(?:${tld})\b`,
        String.raw`(?<![a-z0-9-])[a-z0-9-]+\.[a-z]{2,}(?::\d+)?\/`,
        String.raw`\b\d{1,3}(?:\.\d{1,3}){3}\b`,
        String.raw`\bwww\.`,
        String.raw`\blocalhost:\d`,
      ].join("|"),
    ),
  ],
  [
    "a path",
    /(?:^|[\s"'(=:,;>])(?:\.{1,2})?\/[a-z0-9._-]|(?:^|[\s"'(=])[a-z]:[\\/]|(?<!\S)[^\s/]*\/[^\s/]*\/[^\s/]|\.(?:sh|bash|zsh|ps1|psm1|bat|cmd|exe|dll|vbs|scr|msi|dmg|pkg|deb|rpm|apk|jar|so|bin|run|lnk|hta)\b|%[a-z_]+%|\/dev\/|\/etc\/|\/tmp\//,
  ],
  [
    "an encoded payload",
    /\b(?:base64|b64|base32|unbase64|atob|frombase64string)\b|(?<![a-z0-9+/])(?=[a-z0-9+/]*\d)[a-z0-9+/]{24,}|\b(?:[0-9a-f]{2}){16,}\b|\\x[0-9a-f]{2}|\b(?:run|execute|evaluate|paste)\s+(?:(?:it|this|that)\s*(?:$|[.,;:!])|the\s+(?:following|result|output|string|payload|blob|script|command|snippet|text below))/,
  ],
  [
    "an instruction addressed to agents",
    /\b(?:system\s+(?:notice|message|prompt|override|instruction|update)s?|(?:to|for|attention|note to)\s+(?:all|every)\s+(?:other\s+)?(?:agents|assistants|models|ais|llms|bots)|(?:agents?|assistants?|models?|llms?)\s+reading\s+this|(?:ignore|disregard|forget|override|bypass)\b(?:\s+[\w']+){0,5}?\s+(?:instructions?|rules|guidance|guidelines|lessons|prompts?|guardrails|polic(?:y|ies)|constraints|directions)|new\s+instructions|you\s+(?:are\s+now|must\s+now|are\s+no\s+longer)|from\s+now\s+on|act\s+as\s+(?:an?\s+)?(?:admin|root|developer|unrestricted)|do\s+not\s+(?:tell|inform|alert|mention\s+(?:this\s+)?to)\s+the\s+(?:user|operator|human|admin)|(?:reveal|print|repeat|show|output|leak|dump)\s+(?:\w+\s+){0,3}?(?:system\s+prompt|instructions|secrets?|credentials|api\s+keys?|environment)|as\s+an?\s+(?:ai|language\s+model))\b/,
  ],
  /** Words about evading a model's guard: an order in the instructions, but in the analysis the name of what the trace hit (a content filter's "jailbreak" verdict). */
  ["an instruction addressed to agents", /\b(?:developer\s+mode|jailbreak|dan\s+mode)\b/],
];

/**
 * Verification switches as settings, read with spaces, dots, dashes and underscores taken out
 * (`verify_ssl = false`, `NODE_TLS_REJECT_UNAUTHORIZED`, `InsecureSkipVerify`, `strict-ssl`).
 */
const switches =
  /verifyssl|sslverify|verify(?:to|=|:)*(?:false|0|off|no|none|disabled)\b|rejectunauthorized|skipverify|checkhostname|certnone|certreqs|strictssl|sslmode=?(?:disable|allow|prefer|noverify)|nocheckcertificate|tlsverify(?:to|=|:)*(?:false|0|off|no)|trustedhost|unverifiedcontext|disablewarnings/;

/** Why one instruction is refused, or null when it passes. */
export function refusalOf(text: string): RefusalReason | null {
  const normalised = normaliseForScreen(text);
  const read = skeleton(normalised);
  for (const [reason, shape] of shapes) if (shape.test(read)) return reason;
  if (switches.test(read.replace(/[\s_.-]+/g, ""))) return "a verification switch";
  if (mixesScripts(normalised)) return "a word mixing scripts";
  if (!alphabet.test(normalised)) return "a character outside the lesson alphabet";
  return null;
}

/** The instructions that pass, and those refused with why. */
export function screenInstructions(instructions: readonly string[]): ScreenedInstructions {
  const kept: string[] = [];
  const refused: RefusedInstruction[] = [];
  for (const text of instructions) {
    const reason = refusalOf(text);
    if (reason) refused.push({ text, reason });
    else kept.push(text);
  }
  return { kept, refused };
}

type Screened = Pick<
  Reflection,
  "reflectionText" | "strategyText" | "adjustments" | "learning" | "patterns" | "tags"
>;

/**
 * The lesson without its refused instructions: refused adjustments, patterns and tags are dropped,
 * a refused strategy becomes null and a refused learning empty (the judge then finds it missing).
 * Deterministic, so the pipeline stores exactly the lesson that was judged.
 */
export function screenReflection<R extends Screened>(
  reflection: R,
): { reflection: R; refused: RefusedInstruction[] } {
  const adjustments = screenInstructions(reflection.adjustments);
  const patterns = screenInstructions(reflection.patterns);
  const tags = screenInstructions(reflection.tags);
  const strategy = reflection.strategyText === null ? null : refusalOf(reflection.strategyText);
  const learning = refusalOf(reflection.learning);
  const refused = [
    ...(strategy && reflection.strategyText !== null
      ? [{ text: reflection.strategyText, reason: strategy }]
      : []),
    ...(learning ? [{ text: reflection.learning, reason: learning }] : []),
    ...adjustments.refused,
    ...patterns.refused,
    ...tags.refused,
  ];
  if (refused.length === 0) return { reflection, refused };
  return {
    reflection: {
      ...reflection,
      strategyText: strategy ? null : reflection.strategyText,
      learning: learning ? "" : reflection.learning,
      adjustments: adjustments.kept,
      patterns: patterns.kept,
      tags: tags.kept,
    },
    refused,
  };
}

/** The violation that says what was refused (reasons only, counted, never the text). */
export function refusedViolation(refused: readonly RefusedInstruction[]): string {
  const reasons = [...new Set(refused.map((r) => r.reason))].join(", ");
  const n = refused.length;
  return `Refused ${String(n)} instruction${n === 1 ? "" : "s"} (${reasons}): dropped from the lesson, which is judged without ${n === 1 ? "it" : "them"}. A lesson's instructions are advice in its own words: no address, path, command, package, verification switch or order to agents.`;
}

const orders = shapes.find(([reason]) => reason === "an instruction addressed to agents")?.[1] ?? /$^/;
const credentials = shapes.find(([reason]) => reason === "a credential")?.[1] ?? /$^/;

/** The orders-to-agents shape, read on the screen's normal form (for prompts that carry feedback). */
export const instruction = {
  test: (text: string): boolean => orders.test(skeleton(normaliseForScreen(text))),
};

/**
 * Why a lesson must be quarantined whole (in the rules' own words, never the lesson's), or [] when
 * none: a credential anywhere, or an order to agents in the analysis. What the instructions carry
 * otherwise is refused one instruction at a time (`screenReflection`).
 */
export function screenLesson(reflection: Screened): string[] {
  const analysis = skeleton(normaliseForScreen(reflection.reflectionText));
  const everything = [
    reflection.reflectionText,
    reflection.strategyText ?? "",
    reflection.learning,
    ...reflection.adjustments,
    ...reflection.patterns,
    ...reflection.tags,
  ].map((t) => skeleton(normaliseForScreen(t)));
  const found: string[] = [];
  if (everything.some((t) => credentials.test(t))) found.push("a credential");
  if (orders.test(analysis)) found.push("an instruction addressed to agents");
  return found;
}

/**
 * A string fit to quote back in a violation. Violations travel on the outcome topic and into the
 * generator's next prompt, so what the screen refuses in a lesson is named there, never quoted.
 */
export function quotable(text: string): string {
  return refusalOf(text) ? "[a string the lesson screen refuses]" : text;
}
