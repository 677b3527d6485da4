import { at, int, pick, type Rng } from "./random.js";

/** Text that web pages, listings and terminals are made of, generated from a deterministic PRNG. */

const syllables = [
  "ar",
  "bel",
  "cor",
  "dan",
  "el",
  "fen",
  "gar",
  "hol",
  "is",
  "jor",
  "kel",
  "lan",
  "mor",
  "nor",
  "or",
  "pen",
  "quin",
  "ros",
  "sel",
  "tor",
  "ul",
  "ven",
  "wes",
  "yar",
  "zan",
];
const placeSuffixes = [
  "ton",
  "ville",
  "burg",
  "field",
  "ford",
  "haven",
  " Springs",
  " Heights",
  "mouth",
  "dale",
];
const givenNames = [
  "Anna",
  "Bruno",
  "Chloe",
  "Dmitri",
  "Elena",
  "Farid",
  "Grace",
  "Hiro",
  "Ines",
  "Jonas",
  "Kaia",
  "Luca",
  "Mei",
  "Nadia",
  "Omar",
  "Priya",
  "Quentin",
  "Rosa",
  "Sven",
  "Tariq",
  "Uma",
  "Viktor",
  "Wen",
  "Yusuf",
  "Zoe",
];
const familyNames = [
  "Alvarez",
  "Becker",
  "Costa",
  "Dubois",
  "Eriksen",
  "Fischer",
  "Gupta",
  "Haddad",
  "Ivanova",
  "Jensen",
  "Kowalski",
  "Lindqvist",
  "Moreau",
  "Nakamura",
  "Okafor",
  "Petrov",
  "Quiroga",
  "Rossi",
  "Sato",
  "Tanaka",
  "Ueda",
  "Varga",
  "Weber",
  "Yilmaz",
  "Zhang",
];

export function placeName(rng: Rng): string {
  const base = pick(rng, syllables) + pick(rng, syllables);
  return base.charAt(0).toUpperCase() + base.slice(1) + pick(rng, placeSuffixes);
}

export function personName(rng: Rng): string {
  return `${pick(rng, givenNames)} ${pick(rng, familyNames)}`;
}

const sentenceTemplates: ((rng: Rng, topic: string) => string)[] = [
  (r, t) =>
    `The ${t} was first documented in ${int(r, 1850, 1990)} and has been revised ${int(r, 2, 9)} times since.`,
  (r, t) =>
    `According to the ${int(r, 2001, 2023)} survey, coverage of the ${t} increased by ${int(r, 2, 38)} percent.`,
  (r, t) => `Critics have noted that figures for the ${t} are not always comparable across editions.`,
  (r) => `${personName(r)} led the editorial board from ${int(r, 1995, 2010)} until ${int(r, 2011, 2022)}.`,
  (r, t) => `Data for the ${t} are compiled from national statistical offices and independent registries.`,
  (r) =>
    `A revised methodology was introduced in ${int(r, 2005, 2021)}, which changed how boundary cases are counted.`,
  (r, t) => `See also: ${t} (disambiguation), history of the ${t}, and the list of related articles below.`,
  (r) => `The figures below were last updated on ${int(r, 1, 28)} ${pick(r, months)} ${int(r, 2019, 2024)}.`,
  () => `Some entries are marked with a dagger (†) where the source reports a provisional value.`,
  (r, t) =>
    `Earlier versions of this ${t} listed ${int(r, 40, 400)} entries; several were merged after review.`,
  (r) =>
    `${placeName(r)} and ${placeName(r)} were combined into a single entry in the ${int(r, 1998, 2015)} edition.`,
  (r, t) =>
    `Regional breakdowns of the ${t} are available in the supplementary tables (PDF, ${int(r, 1, 9)}.${int(r, 0, 9)} MB).`,
  (r) =>
    `Citation needed. This section may contain original research (${pick(r, months)} ${int(r, 2016, 2023)}).`,
  (r) =>
    `Values in parentheses are estimates; bold values indicate a change of more than ${int(r, 5, 20)} percent.`,
  (r, t) =>
    `The ${t} is maintained by volunteers and reviewed ${pick(r, ["quarterly", "annually", "twice a year"])}.`,
  (r) =>
    `Retrieved ${int(r, 1, 28)} ${pick(r, months)} ${int(r, 2018, 2024)}. Archived from the original on ${int(r, 1, 28)} ${pick(r, months)} ${int(r, 2018, 2024)}.`,
];

export const months = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

export function prose(rng: Rng, sentences: number, topic: string): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i += 1) out.push(pick(rng, sentenceTemplates)(rng, topic));
  return out.join(" ");
}

export function mdTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

const navigation = [
  "Jump to content",
  "Main menu",
  "Search",
  "Create account",
  "Log in",
  "Personal tools",
  "Contents",
  "hide",
  "(Top)",
];

/** A wiki-style article around the given body, padded with sections, references and footers to about `targetChars`. */
export function articlePage(
  rng: Rng,
  options: { title: string; topic: string; body: string; targetChars: number },
): string {
  const head = [
    ...navigation,
    options.title,
    `${int(rng, 8, 64)} languages`,
    "Article Talk Read Edit View history Tools",
    "From Wikipedia, the free encyclopedia",
    "",
    prose(rng, int(rng, 3, 6), options.topic),
    "",
    options.body,
    "",
  ].join("\n");
  const tail: string[] = [];
  let length = head.length;
  let section = 1;
  while (length < options.targetChars - 1200) {
    const heading = pick(rng, [
      "History",
      "Methodology",
      "Criticism",
      "Notes",
      "Regional data",
      "Revisions",
      "Sources",
      "Further reading",
    ]);
    const block =
      rng() < 0.35
        ? `${heading} (${section})\n${extraTable(rng, options.topic)}\n`
        : `${heading} (${section})\n${prose(rng, int(rng, 6, 14), options.topic)}\n`;
    tail.push(block);
    length += block.length + 1;
    section += 1;
  }
  const references: string[] = ["References"];
  for (let i = 1; i <= 12; i += 1) references.push(`${i}. ^ ${prose(rng, 1, options.topic)}`);
  const footer = [
    ...references,
    "",
    `This page was last edited on ${int(rng, 1, 28)} ${pick(rng, months)} ${int(rng, 2022, 2024)}, at ${int(rng, 10, 23)}:${int(rng, 10, 59)} (UTC).`,
    "Text is available under the Creative Commons Attribution-ShareAlike License 4.0; additional terms may apply.",
    "Privacy policy About Disclaimers Contact Code of Conduct Developers Statistics Cookie statement Mobile view",
  ].join("\n");
  const text = `${head}\n${tail.join("\n")}\n${footer}`;
  return text.length > options.targetChars ? text.slice(0, Math.max(options.targetChars, head.length)) : text;
}

function extraTable(rng: Rng, topic: string): string {
  const rows: string[][] = [];
  const n = int(rng, 8, 30);
  for (let i = 0; i < n; i += 1) {
    rows.push([
      placeName(rng),
      String(int(rng, 1990, 2023)),
      String(int(rng, 10, 99_999)),
      pick(rng, ["yes", "no", "partial", "—"]),
    ]);
  }
  return `Table: ${topic} by region\n${mdTable(["Region", "Year", "Value", "Verified"], rows)}`;
}

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

export function searchPage(rng: Rng, query: string, hits: readonly SearchHit[]): string {
  const lines = [
    `${query} - Search`,
    "Skip to content",
    `About ${int(rng, 12, 980)},${int(rng, 100, 999)},000 results`,
    "",
  ];
  hits.forEach((hit) => {
    lines.push(hit.title, hit.url, hit.snippet, "");
  });
  lines.push(
    "People also ask",
    `What is ${query}?`,
    `How accurate is ${query}?`,
    "",
    "Related searches",
    `${query} 2023`,
    `${query} list`,
    `${query} wiki`,
  );
  return lines.join("\n");
}

/** The message WebSurfer sends after an action, in Magentic-One's format. */
export function webSurferMessage(
  action: string,
  title: string,
  url: string,
  rng: Rng,
  viewportText: string,
): string {
  const shows = int(rng, 4, 100);
  const metadata = JSON.stringify(
    {
      meta_tags: { referrer: "origin-when-cross-origin", viewport: "width=device-width, initial-scale=1" },
      title,
    },
    null,
    2,
  );
  return [
    action,
    "",
    `Here is a screenshot of [${title}](${url}). The viewport shows ${shows}% of the webpage, and is positioned at the ${pick(rng, ["top of the page", "middle of the page", "bottom of the page"])}.`,
    "The following metadata was extracted from the webpage:",
    "",
    "```json",
    metadata,
    "```",
    "",
    "Viewport text:",
    viewportText,
  ].join("\n");
}

export function fakeHash(rng: Rng, length = 7): string {
  let out = "";
  for (let i = 0; i < length; i += 1) out += at("0123456789abcdef".split(""), Math.floor(rng() * 16));
  return out;
}
