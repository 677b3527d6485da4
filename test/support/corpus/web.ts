import { step, type StepSpec } from "./builder.js";
import { at, int, pick, rngFor, thousands, type Rng } from "./random.js";
import { defineFamily, unknownMode, type AnyFamily, type BuildContext, type Scenario } from "./scenario.js";
import { articlePage, mdTable, months, placeName, prose, searchPage, webSurferMessage } from "./text.js";

/** Web-browsing tasks in the GAIA style: look a fact up, count items, find a date, compare prices. */

const team = ["Orchestrator", "WebSurfer", "FileSurfer", "Coder", "Computer_terminal"] as const;

interface Page {
  title: string;
  url: string;
}

interface TableSubject {
  question: string;
  query: string;
  topic: string;
  site: string;
  page: Page;
  alt: Page;
  blog: Page;
  blogDate: string;
  target: string;
  attribute: string;
  caption: string;
  header: string[];
  rows: string[][];
  altRows: string[][];
  targetRow: number;
  neighborRow: number;
  valueCol: number;
  guess: string;
  misformatted?: string;
  /** Footer line the page carries (e.g. the date convention). */
  pageNote?: string;
}

function cell(rows: string[][], row: number, col: number): string {
  return at(at(rows, row), col);
}

function rowLine(row: readonly string[]): string {
  return `| ${row.join(" | ")} |`;
}

function tableBody(s: TableSubject, rows: string[][], title: string): string {
  return [title, "", s.caption, mdTable(s.header, rows), s.pageNote ?? ""].join("\n");
}

function renderPage(rng: Rng, s: TableSubject, rows: string[][], title: string, big: boolean): string {
  const targetChars = big ? int(rng, 20_500, 56_000) : int(rng, 2500, 9000);
  return articlePage(rng, { title, topic: s.topic, body: tableBody(s, rows, title), targetChars });
}

function sheetFor(s: TableSubject, verify: boolean): Scenario["sheet"] {
  return {
    given: [`The request concerns ${s.target}.`],
    lookup: [`The ${s.attribute} of ${s.target}, from ${s.site}.`],
    derive: [],
    guesses: [`${s.site} is likely to have a table listing ${s.topic}.`],
    plan: [
      `WebSurfer searches for "${s.query}" and opens ${s.page.title}.`,
      `WebSurfer reads the row for ${s.target} and reports the ${s.attribute}.`,
      ...(verify ? [`WebSurfer verifies the figure on ${s.site} before it is used.`] : []),
      "Orchestrator formats the final answer exactly as the request asks.",
    ],
  };
}

function searchOpening(rng: Rng, s: TableSubject): StepSpec[] {
  const action = `I typed '${s.query}' into '0 characters out of 2000'.`;
  const hits = [
    { title: s.page.title, url: s.page.url, snippet: prose(rng, 2, s.topic) },
    { title: s.alt.title, url: s.alt.url, snippet: prose(rng, 1, s.topic) },
    { title: s.blog.title, url: s.blog.url, snippet: `${s.blogDate} — ${prose(rng, 1, s.topic)}` },
    {
      title: `${s.topic} - Reddit`,
      url: `https://www.reddit.com/r/AskStatistics/comments/${int(rng, 10_000, 99_999)}`,
      snippet: prose(rng, 1, s.topic),
    },
  ];
  return [
    ...step.delegate(
      "WebSurfer",
      `Please search the web for "${s.query}" and open the most authoritative result.`,
      "Nothing has been looked up yet.",
    ),
    step.browse(action, `web_search(query="${s.query}")`),
    step.page(
      webSurferMessage(
        action,
        `${s.query} - Search`,
        `https://www.bing.com/search?q=${encodeURIComponent(s.query)}`,
        rng,
        searchPage(rng, s.query, hits),
      ),
    ),
  ];
}

function openPage(rng: Rng, s: TableSubject, page: Page, rows: string[][], big: boolean): StepSpec[] {
  const action = `I clicked '${page.title}'.`;
  return [
    step.browse(action, `click("${page.title}")`),
    step.page(webSurferMessage(action, page.title, page.url, rng, renderPage(rng, s, rows, page.title, big))),
  ];
}

function accept(
  s: TableSubject,
  value: string,
  next: "Orchestrator" | "WebSurfer" = "Orchestrator",
): StepSpec {
  return step.ledger({
    satisfied: true,
    satisfiedReason: `WebSurfer reported the ${s.attribute} of ${s.target} (${value}).`,
    next,
    instruction: "Prepare the final answer.",
  });
}

function tableScenario(mode: string, s: TableSubject, ctx: BuildContext, familyId: string): Scenario {
  const { rng, big } = ctx;
  const base = {
    question: s.question,
    style: "magentic" as const,
    team: [...team],
    detourKind: "web" as const,
    detourCtx: { topic: s.topic, site: s.page.title, url: s.page.url },
  };
  const correct = cell(s.rows, s.targetRow, s.valueCol);
  const altValue = cell(s.altRows, s.targetRow, s.valueCol);
  const readRow = `Open "${s.page.title}", find the row for ${s.target} and report the ${s.attribute}.`;
  switch (mode) {
    case "wrong-row": {
      const neighbor = at(s.rows, s.neighborRow);
      const value = at(neighbor, s.valueCol);
      return {
        ...base,
        answer: value,
        sheet: sheetFor(s, false),
        opening: searchOpening(rng, s),
        core: [
          ...step.delegate("WebSurfer", readRow),
          ...openPage(rng, s, s.page, s.rows, big),
          step.say(
            "WebSurfer",
            `I located the table "${s.caption}" on the page. The relevant row reads:\n\n${rowLine(neighbor)}\n\nSo the ${s.attribute} of ${s.target} is ${value}.`,
            true,
          ),
          accept(s, value),
        ],
      };
    }
    case "wrong-page":
      return {
        ...base,
        answer: altValue,
        sheet: sheetFor(s, false),
        opening: searchOpening(rng, s),
        core: [
          ...step.delegate("WebSurfer", readRow),
          ...openPage(rng, s, s.alt, s.altRows, big),
          step.say(
            "WebSurfer",
            `According to "${s.alt.title}", the row for ${s.target} is:\n\n${rowLine(at(s.altRows, s.targetRow))}\n\nThe ${s.attribute} of ${s.target} is therefore ${altValue}.`,
            true,
          ),
          accept(s, altValue),
        ],
      };
    case "stale-snippet":
      return {
        ...base,
        answer: altValue,
        sheet: sheetFor(s, false),
        opening: searchOpening(rng, s),
        core: [
          step.say(
            "WebSurfer",
            `The search results already answer this. The snippet from "${s.blog.title}" (${s.blogDate}) says the ${s.attribute} of ${s.target} is ${altValue}. I did not open the page because the snippet states the figure directly.`,
            true,
          ),
          accept(s, altValue),
        ],
      };
    case "guess": {
      const action = `I typed '${s.target}' into the site search box.`;
      return {
        ...base,
        answer: s.guess,
        sheet: sheetFor(s, false),
        opening: searchOpening(rng, s),
        core: [
          ...step.delegate("WebSurfer", `Use the search box on ${s.site} to find ${s.target}.`),
          step.browse(action, `input_text(field="search", text="${s.target}")`),
          step.page(
            webSurferMessage(
              action,
              `Search results - ${s.site}`,
              `${s.page.url}?search=${encodeURIComponent(s.target)}`,
              rng,
              `Search results\nNo results found for "${s.target}" in this section.\nDid you mean: ${s.target.split(" ")[0] ?? s.target}?\n${prose(rng, 2, s.topic)}`,
            ),
          ),
          step.say(
            "WebSurfer",
            `The site search returned no results for "${s.target}". I could not find the figure on this page.`,
          ),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `The search returned nothing. I could not find the exact figure, so I will assume the ${s.attribute} of ${s.target} is about ${s.guess}, in line with comparable entries, and finalize.`,
              progress: false,
              progressReason: "The last search returned no results.",
              next: "Orchestrator",
              instruction: `Report ${s.guess} as the ${s.attribute} of ${s.target}.`,
            },
            true,
          ),
        ],
      };
    }
    case "skip-verify": {
      const action = `I clicked '${s.blog.title}'.`;
      return {
        ...base,
        answer: altValue,
        sheet: sheetFor(s, true),
        opening: searchOpening(rng, s),
        core: [
          step.browse(action, `click("${s.blog.title}")`),
          step.page(
            webSurferMessage(
              action,
              s.blog.title,
              s.blog.url,
              rng,
              `${s.blog.title}\nPosted ${s.blogDate} by ${placeName(rng)}Fan\n${prose(rng, 5, s.topic)}\nQuick facts: the ${s.attribute} of ${s.target} is ${altValue}.\n${prose(rng, 4, s.topic)}\n${int(rng, 2, 90)} comments`,
            ),
          ),
          step.say(
            "WebSurfer",
            `The blog post "${s.blog.title}" gives the ${s.attribute} of ${s.target} as ${altValue}.`,
          ),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `The blog post gives the figure (${altValue}). Checking it against ${s.site} as the plan says would take several more steps, so verification can be skipped.`,
              next: "Orchestrator",
              instruction: "Prepare the final answer.",
            },
            true,
          ),
        ],
      };
    }
    case "format":
    case "date-format": {
      const misread = s.misformatted ?? correct;
      const core: StepSpec[] = [
        ...step.delegate("WebSurfer", readRow),
        ...openPage(rng, s, s.page, s.rows, big),
      ];
      if (mode === "format") {
        core.push(
          step.say(
            "WebSurfer",
            `The row for ${s.target} reads:\n\n${rowLine(at(s.rows, s.targetRow))}\n\nThe ${s.attribute} is ${correct}.`,
          ),
          accept(s, correct),
          step.say("Orchestrator", `FINAL ANSWER: ${misread}`, true),
        );
      } else {
        core.push(
          step.say(
            "WebSurfer",
            `The entry for ${s.target} reads:\n\n${rowLine(at(s.rows, s.targetRow))}\n\nThe date ${correct} means ${monthDayRead(correct)}, i.e. ${misread}.`,
            true,
          ),
          accept(s, misread),
          step.say("Orchestrator", `FINAL ANSWER: ${misread}`),
        );
      }
      return {
        ...base,
        answer: misread,
        sheet: sheetFor(s, false),
        opening: searchOpening(rng, s),
        core,
        finalInCore: true,
      };
    }
    default:
      return unknownMode(familyId, mode);
  }
}

/** "04/03/2019" read the US way: "April 3, 2019". */
function monthDayRead(ddmmyyyy: string): string {
  const [a, b, y] = ddmmyyyy.split("/");
  return `${at(months, Number(a) - 1)} ${Number(b)}, ${y ?? ""}`;
}

function swapDayMonthIso(ddmmyyyy: string): string {
  const [d, m, y] = ddmmyyyy.split("/");
  return `${y ?? ""}-${d ?? ""}-${m ?? ""}`;
}

interface LookupSpec {
  id: string;
  modes: readonly [string, string, string];
  variants: readonly string[];
  site: string;
  page: Page;
  alt: Page;
  blog: (target: string) => Page;
  topic: string;
  caption: string;
  header: string[];
  keyCol: number;
  valueCol: number;
  attribute: string;
  questions: readonly ((target: string) => string)[];
  query: (target: string) => string;
  /** Rows of the table; must contain every variant in `keyCol`. */
  rows: (rng: Rng, variants: readonly string[]) => string[][];
  /** The same table as it stood on the other page (older edition, other venue...). */
  altRows: (rng: Rng, rows: string[][]) => string[][];
  guess: (correct: string, rng: Rng) => string;
  misformat?: (correct: string) => string;
  pageNote?: string;
}

function lookupFamily(spec: LookupSpec): AnyFamily {
  return defineFamily<string>({
    id: spec.id,
    domain: "web",
    modes: spec.modes,
    variants: spec.variants,
    build(mode, target, ctx) {
      const tableRng = rngFor(`${spec.id}:table`);
      const rows = spec.rows(tableRng, spec.variants);
      const altRows = spec.altRows(tableRng, rows);
      const targetRow = rows.findIndex((r) => r[spec.keyCol] === target);
      if (targetRow < 0) throw new Error(`${spec.id}: ${target} missing from table`);
      const neighborRow = targetRow + 1 < rows.length ? targetRow + 1 : targetRow - 1;
      const correct = cell(rows, targetRow, spec.valueCol);
      const subject: TableSubject = {
        question: at(spec.questions, ctx.wording)(target),
        query: spec.query(target),
        topic: spec.topic,
        site: spec.site,
        page: spec.page,
        alt: spec.alt,
        blog: spec.blog(target),
        blogDate: `${int(ctx.rng, 1, 28)} ${pick(ctx.rng, months)} ${int(ctx.rng, 2012, 2018)}`,
        target,
        attribute: spec.attribute,
        caption: spec.caption,
        header: spec.header,
        rows,
        altRows,
        targetRow,
        neighborRow,
        valueCol: spec.valueCol,
        guess: spec.guess(correct, ctx.rng),
        ...(spec.misformat ? { misformatted: spec.misformat(correct) } : {}),
        ...(spec.pageNote ? { pageNote: spec.pageNote } : {}),
      };
      return tableScenario(mode, subject, ctx, spec.id);
    },
  });
}

const num = (text: string) => Number(text.replace(/[^0-9.]/g, ""));
const perturb = (value: number, rng: Rng, share = 0.06) =>
  Math.round(value * (1 + (rng() < 0.5 ? -1 : 1) * share * (0.4 + rng())));
const roughGuess = (correct: string, rng: Rng) => {
  const value = num(correct);
  const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(value)) - 1);
  return thousands(Math.round(perturb(value, rng, 0.15) / magnitude) * magnitude);
};

const cities = [
  "New York",
  "Los Angeles",
  "Chicago",
  "Houston",
  "Phoenix",
  "Philadelphia",
  "San Antonio",
  "San Diego",
  "Dallas",
  "Jacksonville",
  "Austin",
  "Fort Worth",
  "San Jose",
  "Columbus",
  "Charlotte",
  "Indianapolis",
  "San Francisco",
  "Seattle",
  "Denver",
  "Oklahoma City",
  "Nashville",
  "Washington",
  "El Paso",
  "Las Vegas",
  "Boston",
  "Detroit",
  "Portland",
  "Louisville",
  "Memphis",
  "Baltimore",
  "Milwaukee",
  "Albuquerque",
  "Tucson",
  "Fresno",
  "Sacramento",
  "Mesa",
  "Kansas City",
  "Atlanta",
  "Omaha",
  "Colorado Springs",
  "Raleigh",
  "Long Beach",
  "Virginia Beach",
  "Miami",
  "Oakland",
  "Minneapolis",
  "Tulsa",
  "Bakersfield",
  "Wichita",
  "Arlington",
];

const cityPopulation = lookupFamily({
  id: "web.city-population",
  modes: ["wrong-row", "wrong-page", "format"],
  variants: ["Tucson", "Omaha", "Fresno", "Wichita", "Raleigh"],
  site: "en.wikipedia.org",
  page: {
    title: "List of United States cities by population - Wikipedia",
    url: "https://en.wikipedia.org/wiki/List_of_United_States_cities_by_population",
  },
  alt: {
    title: "List of United States cities by population (2019 estimates) - Wikipedia",
    url: "https://en.wikipedia.org/w/index.php?title=List_of_United_States_cities_by_population&oldid=951882345",
  },
  blog: (t) => ({
    title: `${t} population facts and figures`,
    url: `https://www.citypopulationfacts.net/${t.toLowerCase().replace(/ /g, "-")}`,
  }),
  topic: "list of cities by population",
  caption: "The 50 most populous incorporated places, 2020 census",
  header: ["2020 rank", "City", "2020 census", "2010 census", "Change"],
  keyCol: 1,
  valueCol: 2,
  attribute: "2020 census population",
  questions: [
    (t) =>
      `According to the English Wikipedia list of United States cities by population, what was the 2020 census population of ${t}? Round to the nearest thousand.`,
    (t) =>
      `What population did the 2020 US census record for the city of ${t}, as listed on Wikipedia? Give the figure rounded to the nearest thousand.`,
  ],
  query: (t) => `${t} 2020 census population list of United States cities by population`,
  rows: (rng) => {
    let pop = 8_804_190;
    return cities.map((city, i) => {
      const row = [
        String(i + 1),
        city,
        thousands(pop),
        thousands(perturb(pop, rng, 0.05)),
        `${(rng() * 14 - 2).toFixed(2)}%`,
      ];
      pop = Math.round(pop * (0.82 + rng() * 0.17));
      if (pop < 360_000) pop = 360_000 + int(rng, 0, 40_000) * (50 - i);
      return row;
    });
  },
  altRows: (rng, rows) =>
    rows.map((r) => r.map((c, j) => (j === 2 ? thousands(perturb(num(c), rng, 0.03)) : c))),
  guess: roughGuess,
  misformat: (c) => c,
});

const nocs = [
  "United States",
  "China",
  "Japan",
  "Great Britain",
  "ROC",
  "Australia",
  "Netherlands",
  "France",
  "Germany",
  "Italy",
  "Canada",
  "Brazil",
  "New Zealand",
  "Cuba",
  "Hungary",
  "South Korea",
  "Poland",
  "Czech Republic",
  "Kenya",
  "Norway",
  "Jamaica",
  "Spain",
  "Sweden",
  "Switzerland",
  "Denmark",
  "Croatia",
  "Iran",
  "Serbia",
  "Belgium",
  "Bulgaria",
];

const olympicGold = lookupFamily({
  id: "web.olympic-medals",
  modes: ["wrong-row", "stale-snippet", "skip-verify"],
  variants: ["Hungary", "Kenya", "Croatia", "Jamaica", "Norway"],
  site: "olympics.com",
  page: {
    title: "Tokyo 2020 Olympic Games medal table - Olympics.com",
    url: "https://olympics.com/en/olympic-games/tokyo-2020/medals",
  },
  alt: {
    title: "Rio 2016 Olympic Games medal table - Olympics.com",
    url: "https://olympics.com/en/olympic-games/rio-2016/medals",
  },
  blog: (t) => ({
    title: `${t} at the Olympics: every medal so far`,
    url: `https://sportsfanblog.example.com/olympics/${t.toLowerCase().replace(/ /g, "-")}`,
  }),
  topic: "Olympic medal table",
  caption: "Medal table, Games of the XXXII Olympiad",
  header: ["Rank", "Team", "Gold", "Silver", "Bronze", "Total"],
  keyCol: 1,
  valueCol: 2,
  attribute: "number of gold medals at Tokyo 2020",
  questions: [
    (t) =>
      `How many gold medals did ${t} win at the Tokyo 2020 Summer Olympics, according to the official medal table?`,
    (t) =>
      `Per the official Olympics.com medal standings for the Tokyo 2020 Games, how many golds did ${t} take home?`,
  ],
  query: (t) => `${t} gold medals Tokyo 2020 medal table`,
  rows: (rng) => {
    let gold = 39;
    return nocs.map((noc, i) => {
      const s = int(rng, 1, gold + 3);
      const b = int(rng, 1, gold + 5);
      const row = [String(i + 1), noc, String(gold), String(s), String(b), String(gold + s + b)];
      gold = Math.max(1, gold - int(rng, 0, 4));
      return row;
    });
  },
  altRows: (rng, rows) =>
    rows.map((r) => r.map((c, j) => (j === 2 ? String(Math.max(0, Number(c) + int(rng, -3, 2))) : c))),
  guess: (c, rng) => String(Number(c) + int(rng, 1, 3)),
});

const peaks = [
  "Mount Everest",
  "K2",
  "Kangchenjunga",
  "Lhotse",
  "Makalu",
  "Cho Oyu",
  "Dhaulagiri I",
  "Manaslu",
  "Nanga Parbat",
  "Annapurna I",
  "Gasherbrum I",
  "Broad Peak",
  "Gasherbrum II",
  "Shishapangma",
  "Gyachung Kang",
  "Gasherbrum III",
  "Annapurna II",
  "Gasherbrum IV",
  "Himalchuli",
  "Distaghil Sar",
];

const mountainElevation = lookupFamily({
  id: "web.mountain-elevation",
  modes: ["wrong-row", "guess", "format"],
  variants: ["Makalu", "Manaslu", "Cho Oyu", "Annapurna I", "Broad Peak"],
  site: "en.wikipedia.org",
  page: {
    title: "List of highest mountains on Earth - Wikipedia",
    url: "https://en.wikipedia.org/wiki/List_of_highest_mountains_on_Earth",
  },
  alt: {
    title: "List of mountains by prominence - Wikipedia",
    url: "https://en.wikipedia.org/wiki/List_of_mountain_peaks_by_prominence",
  },
  blog: (t) => ({
    title: `Climbing ${t}: route guide`,
    url: `https://trekkingnotes.example.org/${t.toLowerCase().replace(/ /g, "-")}`,
  }),
  topic: "highest mountains",
  caption: "Mountains of at least 7,200 metres",
  header: ["No", "Mountain", "Height (m)", "Height (ft)", "Range", "First ascent"],
  keyCol: 1,
  valueCol: 2,
  attribute: "height in metres",
  questions: [
    (t) =>
      `What is the height of ${t} in metres, as given in Wikipedia's list of highest mountains on Earth? Answer with an integer number of metres.`,
    (t) =>
      `Using the English Wikipedia "List of highest mountains on Earth", how tall is ${t}, in metres (integer)?`,
  ],
  query: (t) => `${t} height metres list of highest mountains`,
  rows: (rng) => {
    let h = 8849;
    return peaks.map((p, i) => {
      const row = [
        String(i + 1),
        p,
        thousands(h),
        thousands(Math.round(h * 3.28084)),
        pick(rng, [
          "Mahalangur Himalaya",
          "Baltoro Karakoram",
          "Kangchenjunga Himalaya",
          "Annapurna Himalaya",
        ]),
        String(int(rng, 1950, 1986)),
      ];
      h -= int(rng, 8, 70);
      return row;
    });
  },
  altRows: (_rng, rows) => rows,
  guess: (c, rng) => thousands(Math.round(num(c) / 100) * 100 + int(rng, 1, 3) * 50),
  misformat: (c) => thousands(Math.round(num(c) * 3.28084)),
});

const companies = [
  "Arvela Systems",
  "Brightwater Foods",
  "Corrigan Freight",
  "Delmont Health",
  "Eastlake Energy",
  "Fairbourne Retail",
  "Glenrock Mining",
  "Halvorsen Marine",
  "Ironvale Steel",
  "Juniper Ridge Telecom",
  "Kestrel Aerospace",
  "Lowmoor Textiles",
  "Marlowe Pharma",
  "Northgate Insurance",
  "Oakhurst Media",
];

const companyRevenue = lookupFamily({
  id: "web.company-revenue",
  modes: ["wrong-page", "stale-snippet", "guess"],
  variants: [
    "Corrigan Freight",
    "Halvorsen Marine",
    "Kestrel Aerospace",
    "Marlowe Pharma",
    "Lowmoor Textiles",
  ],
  site: "the SEC EDGAR full-text search",
  page: {
    title: "Form 10-K fiscal year 2022 - selected financial data",
    url: "https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&type=10-K&dateb=2023",
  },
  alt: {
    title: "Form 10-K fiscal year 2021 - selected financial data",
    url: "https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&type=10-K&dateb=2022",
  },
  blog: (t) => ({
    title: `${t} revenue, growth and market share`,
    url: `https://www.companystats.example.com/${t.toLowerCase().replace(/ /g, "-")}`,
  }),
  topic: "annual report financial data",
  caption: "Selected financial data (in millions of USD, fiscal year 2022)",
  header: ["Company", "Total revenue ($M)", "Operating income ($M)", "Employees", "Fiscal year end"],
  keyCol: 0,
  valueCol: 1,
  attribute: "fiscal 2022 total revenue in millions of USD",
  questions: [
    (t) =>
      `What total revenue, in millions of US dollars, did ${t} report for fiscal year 2022 in its Form 10-K?`,
    (t) =>
      `In its annual report on Form 10-K for FY2022, what did ${t} give as total revenue (USD millions)?`,
  ],
  query: (t) => `${t} 10-K 2022 total revenue`,
  rows: (rng) =>
    companies.map((c) => [
      c,
      thousands(int(rng, 400, 48_000)),
      thousands(int(rng, 20, 4000)),
      thousands(int(rng, 900, 90_000)),
      pick(rng, ["Dec 31", "Jun 30", "Sep 30"]),
    ]),
  altRows: (rng, rows) =>
    rows.map((r) => r.map((c, j) => (j === 1 ? thousands(perturb(num(c), rng, 0.11)) : c))),
  guess: roughGuess,
});

const books = [
  "The Left Hand of Darkness",
  "A Wizard of Earthsea",
  "Foundation",
  "The Dispossessed",
  "Solaris",
  "Dune",
  "Neuromancer",
  "Hyperion",
  "The Drowned World",
  "Childhood's End",
  "Rendezvous with Rama",
  "Kindred",
];

const bookPages = lookupFamily({
  id: "web.book-pages",
  modes: ["wrong-page", "guess", "skip-verify"],
  variants: ["The Dispossessed", "Solaris", "Hyperion", "Kindred", "Neuromancer"],
  site: "openlibrary.org",
  page: {
    title: "First editions - page counts (Open Library)",
    url: "https://openlibrary.org/search?q=first+edition&mode=everything",
  },
  alt: {
    title: "Paperback reissues - page counts (Open Library)",
    url: "https://openlibrary.org/search?q=reissue&mode=everything",
  },
  blog: (t) => ({
    title: `${t}: a reader's guide`,
    url: `https://bookclubnotes.example.net/${t.toLowerCase().replace(/ /g, "-")}`,
  }),
  topic: "book editions",
  caption: "First editions",
  header: ["Title", "Publisher", "Year", "Pages", "ISBN/OCLC"],
  keyCol: 0,
  valueCol: 3,
  attribute: "page count of the first edition",
  questions: [
    (t) => `How many pages does the first edition of "${t}" have, according to Open Library?`,
    (t) =>
      `Open Library lists several editions of "${t}". What page count does it give for the first edition?`,
  ],
  query: (t) => `${t} first edition number of pages open library`,
  rows: (rng) =>
    books.map((b) => [
      b,
      pick(rng, ["Harper & Row", "Ace Books", "Gollancz", "Doubleday", "Walker"]),
      String(int(rng, 1951, 1989)),
      String(int(rng, 180, 520)),
      `OCLC ${int(rng, 100_000, 9_999_999)}`,
    ]),
  altRows: (rng, rows) =>
    rows.map((r) =>
      r.map((c, j) =>
        j === 3 ? String(Number(c) + int(rng, 12, 90)) : j === 2 ? String(Number(c) + int(rng, 10, 30)) : c,
      ),
    ),
  guess: (c, rng) => String(Math.round(Number(c) / 50) * 50 + int(rng, 0, 1) * 50),
});

const pressTitles = [
  "Agency awards contracts for lunar cargo delivery",
  "New weather satellite completes commissioning",
  "Mission team selects landing site for sample return",
  "Spacecraft enters safe mode after power anomaly",
  "Agency announces astronaut candidate class",
  "Telescope captures deepest infrared image to date",
  "Budget request supports return to the Moon",
  "Rover completes first drive on crater floor",
  "Agency signs cooperation agreement on Earth observation",
  "Launch of climate mission moved to next window",
  "Small satellite constellation reaches orbit",
  "Engine test clears way for first integrated flight",
];

const pressDate = lookupFamily({
  id: "web.press-release-date",
  modes: ["date-format", "wrong-row", "guess"],
  variants: [
    "Rover completes first drive on crater floor",
    "Spacecraft enters safe mode after power anomaly",
    "Small satellite constellation reaches orbit",
    "Agency announces astronaut candidate class",
    "Engine test clears way for first integrated flight",
  ],
  site: "the UK Space Agency news archive",
  page: {
    title: "News archive 2019 - UK Space Agency",
    url: "https://www.gov.uk/search/news-and-communications?organisations[]=uk-space-agency&year=2019",
  },
  alt: {
    title: "News archive 2018 - UK Space Agency",
    url: "https://www.gov.uk/search/news-and-communications?organisations[]=uk-space-agency&year=2018",
  },
  blog: (t) => ({
    title: `Space news roundup: ${t.toLowerCase()}`,
    url: "https://spacenewsroundup.example.com/weekly",
  }),
  topic: "press release archive",
  caption: "Press releases, 2019",
  header: ["Published", "Title", "Type"],
  keyCol: 1,
  valueCol: 0,
  attribute: "publication date",
  pageNote: "Dates on this site are shown as DD/MM/YYYY.",
  questions: [
    (t) =>
      `On what date was the press release "${t}" published in the 2019 news archive? Answer in the format YYYY-MM-DD.`,
    (t) => `Find the publication date of the 2019 press release titled "${t}". Give it as YYYY-MM-DD.`,
  ],
  query: (t) => `"${t}" press release 2019`,
  rows: (rng) =>
    pressTitles.map((t, i) => {
      const month = Math.min(12, 1 + i);
      let day = int(rng, 1, 12);
      if (day === month) day = (day % 12) + 1;
      return [
        `${String(day).padStart(2, "0")}/${String(month).padStart(2, "0")}/2019`,
        t,
        pick(rng, ["Press release", "News story"]),
      ];
    }),
  altRows: (rng, rows) => rows.map((r) => r.map((c, j) => (j === 0 ? c.replace("2019", "2018") : c))),
  guess: () => "2019-06-30",
  misformat: (c) => swapDayMonthIso(c),
});

const releaseTags = [
  "v2.8.0",
  "v2.8.1",
  "v2.9.0-rc1",
  "v2.9.0",
  "v2.9.1",
  "v2.10.0-rc1",
  "v2.10.0",
  "v2.10.1",
  "v2.11.0-rc1",
  "v2.11.0",
  "v2.11.1",
  "v2.12.0-rc1",
  "v2.12.0",
  "v2.12.1",
];

const releaseDate = lookupFamily({
  id: "web.release-date",
  modes: ["wrong-row", "wrong-page", "stale-snippet"],
  variants: ["v2.9.0", "v2.10.0", "v2.11.0", "v2.12.0", "v2.10.1"],
  site: "github.com",
  page: {
    title: "Releases · tidewater-dev/tidewater",
    url: "https://github.com/tidewater-dev/tidewater/releases",
  },
  alt: {
    title: "Releases · tidewater-community/tidewater-lts",
    url: "https://github.com/tidewater-community/tidewater-lts/releases",
  },
  blog: (t) => ({ title: `What's new in Tidewater ${t}`, url: `https://devnews.example.io/tidewater-${t}` }),
  topic: "software releases",
  caption: "Releases (newest last)",
  header: ["Tag", "Date", "Commits to main since", "Assets"],
  keyCol: 0,
  valueCol: 1,
  attribute: "release date",
  questions: [
    (t) =>
      `On what date was Tidewater ${t} released on GitHub (tidewater-dev/tidewater)? Answer as YYYY-MM-DD.`,
    (t) =>
      `According to the tidewater-dev/tidewater GitHub releases page, when was ${t} published? Use YYYY-MM-DD.`,
  ],
  query: (t) => `tidewater ${t} release github`,
  rows: (rng) => {
    let day = Date.UTC(2022, 0, 10);
    return releaseTags.map((tag) => {
      day += int(rng, 9, 50) * 86_400_000;
      return [
        tag,
        new Date(day).toISOString().slice(0, 10),
        String(int(rng, 4, 300)),
        String(int(rng, 2, 14)),
      ];
    });
  },
  altRows: (rng, rows) =>
    rows.map((r) =>
      r.map((c, j) =>
        j === 1 ? new Date(Date.parse(c) + int(rng, 3, 40) * 86_400_000).toISOString().slice(0, 10) : c,
      ),
    ),
  guess: () => "2023-01-01",
});

const exhibitions = [
  "Light and Matter",
  "The Silk Roads",
  "Pacific Currents",
  "Machines of Wonder",
  "Threads of Time",
  "The Printed Page",
  "Northern Lights: Art of the Arctic",
  "Clay and Fire",
  "Portraits of the Republic",
  "Gardens of the Mind",
];

const exhibitionDate = lookupFamily({
  id: "web.exhibition-date",
  modes: ["wrong-page", "guess", "date-format"],
  variants: [
    "Machines of Wonder",
    "Clay and Fire",
    "Threads of Time",
    "The Printed Page",
    "Gardens of the Mind",
  ],
  site: "the National Museum of Scotland",
  page: {
    title: "Past exhibitions - National Museum of Scotland",
    url: "https://www.nms.ac.uk/exhibitions-events/past-exhibitions",
  },
  alt: {
    title: "Touring exhibitions - partner venues",
    url: "https://www.nms.ac.uk/exhibitions-events/touring",
  },
  blog: (t) => ({
    title: `Review: ${t}`,
    url: `https://artsreview.example.co.uk/${t.toLowerCase().replace(/[^a-z]+/g, "-")}`,
  }),
  topic: "museum exhibitions",
  caption: "Past exhibitions, Edinburgh",
  header: ["Opened", "Closed", "Exhibition", "Gallery"],
  keyCol: 2,
  valueCol: 0,
  attribute: "opening date in Edinburgh",
  pageNote: "All dates DD/MM/YYYY.",
  questions: [
    (t) =>
      `On what date did the exhibition "${t}" open at the National Museum of Scotland in Edinburgh? Answer as YYYY-MM-DD.`,
    (t) =>
      `When did "${t}" first open to the public at the National Museum of Scotland (Edinburgh)? Format: YYYY-MM-DD.`,
  ],
  query: (t) => `"${t}" exhibition National Museum of Scotland opening date`,
  rows: (rng) =>
    exhibitions.map((e) => {
      const m = int(rng, 1, 12);
      const d = ((m - 1 + int(rng, 1, 11)) % 12) + 1;
      const y = int(rng, 2014, 2022);
      return [
        `${String(d).padStart(2, "0")}/${String(m).padStart(2, "0")}/${y}`,
        `${String(int(rng, 1, 28)).padStart(2, "0")}/${String(int(rng, 1, 12)).padStart(2, "0")}/${y + 1}`,
        e,
        pick(rng, ["Exhibition Gallery 1", "Grand Gallery", "Special Exhibitions"]),
      ];
    }),
  altRows: (rng, rows) =>
    rows.map((r) =>
      r.map((c, j) =>
        j === 0
          ? `${String(int(rng, 1, 28)).padStart(2, "0")}/${String(int(rng, 1, 12)).padStart(2, "0")}/${Number(c.slice(6)) + 1}`
          : c,
      ),
    ),
  guess: (c) => `${c.slice(6)}-01-01`,
  misformat: (c) => swapDayMonthIso(c),
});

// ---- counting tasks ----

interface CountSubject {
  question: string;
  query: string;
  topic: string;
  site: string;
  page: Page;
  alt: Page;
  noun: string;
  criterion: string;
  header: string[];
  rows: string[][];
  matches: (row: string[]) => boolean;
  pageSize: number;
  altCount: number;
  guess: number;
}

function countScenario(mode: string, s: CountSubject, ctx: BuildContext, familyId: string): Scenario {
  const { rng, big } = ctx;
  const base = {
    question: s.question,
    style: "magentic" as const,
    team: [...team],
    detourKind: "web" as const,
    detourCtx: { topic: s.topic, site: s.page.title, url: s.page.url },
    sheet: {
      given: [`Only ${s.noun} that are ${s.criterion} count.`],
      lookup: [`The full list of ${s.noun} on ${s.site}.`],
      derive: [`The number of ${s.noun} that are ${s.criterion}.`],
      guesses: [],
      plan: [
        `WebSurfer opens the list on ${s.site} and goes through every page of it.`,
        `WebSurfer counts the ${s.noun} that are ${s.criterion}, reporting the count per page.`,
        "Orchestrator adds the counts up and answers with a single number.",
      ],
    },
  };
  const action = `I typed '${s.query}' into '0 characters out of 2000'.`;
  const opening: StepSpec[] = [
    ...step.delegate(
      "WebSurfer",
      `Search for "${s.query}" and open the list on ${s.site}.`,
      "Nothing has been looked up yet.",
    ),
    step.browse(action, `web_search(query="${s.query}")`),
    step.page(
      webSurferMessage(
        action,
        `${s.query} - Search`,
        `https://www.bing.com/search?q=${encodeURIComponent(s.query)}`,
        rng,
        searchPage(rng, s.query, [
          { title: s.page.title, url: s.page.url, snippet: prose(rng, 2, s.topic) },
          { title: s.alt.title, url: s.alt.url, snippet: prose(rng, 1, s.topic) },
        ]),
      ),
    ),
  ];
  const listing = (rows: string[][], from: number, total: number, title: string) => {
    const text = `${title}\nShowing ${from + 1}–${from + rows.length} of ${total} results\n\n${mdTable(s.header, rows)}\n\n${total > from + rows.length ? `Page ${Math.floor(from / s.pageSize) + 1} of ${Math.ceil(total / s.pageSize)}  · Next ›` : ""}`;
    return big
      ? articlePage(rng, { title, topic: s.topic, body: text, targetChars: int(rng, 20_500, 52_000) })
      : text;
  };
  const open = (page: Page, content: string): StepSpec[] => [
    step.browse(`I clicked '${page.title}'.`, `click("${page.title}")`),
    step.page(webSurferMessage(`I clicked '${page.title}'.`, page.title, page.url, rng, content)),
  ];
  switch (mode) {
    case "early-stop": {
      const first = s.rows.slice(0, s.pageSize);
      const onFirst = first.filter(s.matches).length;
      return {
        ...base,
        answer: String(onFirst),
        opening,
        core: [
          ...step.delegate("WebSurfer", `Open the list and count the ${s.noun} that are ${s.criterion}.`),
          ...open(s.page, listing(first, 0, s.rows.length, s.page.title)),
          step.say("WebSurfer", `On this page I count ${onFirst} ${s.noun} that are ${s.criterion}.`),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `WebSurfer has counted the ${s.noun} that are ${s.criterion}: ${onFirst}.`,
              next: "Orchestrator",
              instruction: `Answer ${onFirst}.`,
            },
            true,
          ),
        ],
      };
    }
    case "filter-ignored":
      return {
        ...base,
        answer: String(s.rows.length),
        opening,
        core: [
          ...step.delegate("WebSurfer", `Open the list and count the ${s.noun} that are ${s.criterion}.`),
          ...open(s.page, listing(s.rows, 0, s.rows.length, s.page.title)),
          step.say(
            "WebSurfer",
            `The list has ${s.rows.length} entries in total, so there are ${s.rows.length} ${s.noun} that are ${s.criterion}.`,
            true,
          ),
          step.ledger({
            satisfied: true,
            satisfiedReason: `WebSurfer counted ${s.rows.length}.`,
            next: "Orchestrator",
            instruction: "Prepare the final answer.",
          }),
        ],
      };
    case "wrong-page":
      return {
        ...base,
        answer: String(s.altCount),
        opening,
        core: [
          ...step.delegate("WebSurfer", `Open the list and count the ${s.noun} that are ${s.criterion}.`),
          ...open(
            s.alt,
            `${s.alt.title}\n${prose(rng, 4, s.topic)}\nIn total, ${s.altCount} ${s.noun} in this list are ${s.criterion}.\n${prose(rng, 6, s.topic)}`,
          ),
          step.say(
            "WebSurfer",
            `"${s.alt.title}" states that ${s.altCount} ${s.noun} are ${s.criterion}.`,
            true,
          ),
          step.ledger({
            satisfied: true,
            satisfiedReason: `WebSurfer found the count (${s.altCount}).`,
            next: "Orchestrator",
            instruction: "Prepare the final answer.",
          }),
        ],
      };
    case "stale-snippet":
      return {
        ...base,
        answer: String(s.altCount),
        opening,
        core: [
          step.say(
            "WebSurfer",
            `The second search result ("${s.alt.title}", cached ${int(rng, 2013, 2017)}) says ${s.altCount} ${s.noun} are ${s.criterion}. That answers the question, so I did not open the list itself.`,
            true,
          ),
          step.ledger({
            satisfied: true,
            satisfiedReason: `WebSurfer found the count (${s.altCount}).`,
            next: "Orchestrator",
            instruction: "Prepare the final answer.",
          }),
        ],
      };
    case "guess":
      return {
        ...base,
        answer: String(s.guess),
        opening,
        core: [
          ...step.delegate("WebSurfer", `Open the list and count the ${s.noun} that are ${s.criterion}.`),
          step.browse(`I clicked '${s.page.title}'.`, `click("${s.page.title}")`),
          step.page(
            `${s.page.title}\n\nNo results found.\nThe list could not be loaded. Please try again later. (error ${int(rng, 500, 504)})`,
            { error: { message: "list failed to load", code: "HTTP_503" } },
          ),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `The list did not load and no results were found. Based on what is typical for ${s.topic}, I will assume there are about ${s.guess} and finalize.`,
              progress: false,
              progressReason: "The page returned no results.",
              next: "Orchestrator",
              instruction: `Answer ${s.guess}.`,
            },
            true,
          ),
        ],
      };
    default:
      return unknownMode(familyId, mode);
  }
}

interface CountSpec<V> {
  id: string;
  modes: readonly [string, string, string];
  variants: readonly V[];
  subject: (variant: V, rng: Rng, wording: number) => Omit<CountSubject, "altCount" | "guess">;
}

function countFamily<V>(spec: CountSpec<V>): AnyFamily {
  return defineFamily<V>({
    id: spec.id,
    domain: "web",
    modes: spec.modes,
    variants: spec.variants,
    build(mode, variant, ctx) {
      const s = spec.subject(variant, rngFor(`${spec.id}:${JSON.stringify(variant)}`), ctx.wording);
      const correct = s.rows.filter(s.matches).length;
      return countScenario(
        mode,
        {
          ...s,
          altCount: correct + int(ctx.rng, 2, 6),
          guess: Math.max(1, correct + pick(ctx.rng, [-4, -3, 3, 5])),
        },
        ctx,
        spec.id,
      );
    },
  });
}

const artists = [
  "Mercedes Sosa",
  "Caetano Veloso",
  "Youssou N'Dour",
  "Björk",
  "Fela Kuti",
  "Nick Cave",
  "Ryuichi Sakamoto",
  "Cesária Évora",
  "Tom Waits",
  "PJ Harvey",
];

const discography = countFamily<string>({
  id: "web.discography-count",
  modes: ["filter-ignored", "wrong-page", "guess"],
  variants: artists,
  subject: (artist, rng, wording) => {
    const rows: string[][] = [];
    for (let year = 1998; year <= 2011; year += 1) {
      if (rng() < 0.75)
        rows.push([
          String(year),
          placeName(rng).split(/\s/)[0] ?? "Untitled",
          pick(rng, ["Studio album", "Studio album", "Live album", "Compilation", "EP"]),
          pick(rng, ["—", String(int(rng, 1, 80))]),
        ]);
    }
    const inRange = rows.filter((r) => Number(r[0]) >= 2000 && Number(r[0]) <= 2009);
    return {
      question: at(
        [
          `How many studio albums were published by ${artist} between 2000 and 2009 (included)? You can use the latest 2022 version of English Wikipedia.`,
          `Between 2000 and 2009 inclusive, how many studio albums did ${artist} release, according to the English Wikipedia discography?`,
        ],
        wording,
      ),
      query: `${artist} discography studio albums`,
      topic: "discography",
      site: "en.wikipedia.org",
      page: {
        title: `${artist} discography - Wikipedia`,
        url: `https://en.wikipedia.org/wiki/${encodeURIComponent(artist.replace(/ /g, "_"))}_discography`,
      },
      alt: {
        title: `${artist} – Diskografie - Wikipedia (de)`,
        url: `https://de.wikipedia.org/wiki/${encodeURIComponent(artist.replace(/ /g, "_"))}/Diskografie`,
      },
      noun: "albums",
      criterion: "studio albums released 2000–2009",
      header: ["Year", "Title", "Type", "Peak chart position"],
      rows: inRange,
      matches: (r) => r[2] === "Studio album",
      pageSize: 50,
    };
  },
});

const arxivKeywords = ["retrieval", "hallucination", "tokenization", "alignment", "summarization"];

const arxivCount = countFamily<string>({
  id: "web.arxiv-count",
  modes: ["early-stop", "filter-ignored", "guess"],
  variants: arxivKeywords,
  subject: (keyword, rng, wording) => {
    const rows: string[][] = [];
    const n = int(rng, 60, 110);
    for (let i = 0; i < n; i += 1) {
      const hit = rng() < 0.35;
      rows.push([
        `2305.${String(int(rng, 10_000, 19_999))}`,
        `${hit ? `${keyword[0]?.toUpperCase() ?? ""}${keyword.slice(1)} in` : pick(rng, ["Towards", "On", "Revisiting", "Scaling"])} ${pick(rng, ["low-resource", "multilingual", "long-context", "instruction-tuned"])} ${pick(rng, ["language models", "dialogue systems", "translation", "QA"])}`,
        pick(rng, ["cs.CL", "cs.CL", "cs.CL", "cs.LG (cross-list)", "cs.AI (cross-list)"]),
      ]);
    }
    return {
      question: at(
        [
          `How many papers with the word "${keyword}" in their title were submitted to arXiv's cs.CL category (primary, not cross-lists) in May 2023?`,
          `Count the May 2023 arXiv submissions whose primary category is cs.CL and whose title contains "${keyword}".`,
        ],
        wording,
      ),
      query: `arxiv cs.CL May 2023 "${keyword}" title`,
      topic: "arXiv listings",
      site: "arxiv.org",
      page: {
        title: `Search results: title="${keyword}" cs.CL 2023-05`,
        url: `https://arxiv.org/search/advanced?terms-0-term=${keyword}&classification-computer_science=y&date-year=2023`,
      },
      alt: {
        title: "arXiv monthly submission statistics",
        url: "https://arxiv.org/stats/monthly_submissions",
      },
      noun: "papers",
      criterion: `primary cs.CL with "${keyword}" in the title`,
      header: ["arXiv id", "Title", "Category"],
      rows,
      matches: (r) => (r[1] ?? "").toLowerCase().includes(keyword) && r[2] === "cs.CL",
      pageSize: 25,
    };
  },
});

const genera = ["Eleutherodactylus", "Atelopus", "Hyperolius", "Rhacophorus", "Plethodon"];

const redlistCount = countFamily<string>({
  id: "web.redlist-count",
  modes: ["filter-ignored", "early-stop", "stale-snippet"],
  variants: genera,
  subject: (genus, rng, wording) => {
    const rows: string[][] = [];
    const n = int(rng, 40, 90);
    for (let i = 0; i < n; i += 1) {
      rows.push([
        `${genus} ${pick(rng, ["alb", "cor", "dent", "fus", "grac", "mont", "nig", "rub", "vir"])}${pick(rng, ["us", "ensis", "atus", "icola", "ipes"])}`,
        pick(rng, ["EN", "CR", "VU", "LC", "NT", "DD", "EN"]),
        String(int(rng, 1990, 2022)),
      ]);
    }
    return {
      question: at(
        [
          `How many species of the genus ${genus} are currently assessed as Endangered (EN) on the IUCN Red List?`,
          `According to the IUCN Red List, how many ${genus} species carry the category Endangered (EN) — not Critically Endangered?`,
        ],
        wording,
      ),
      query: `IUCN red list ${genus} endangered species`,
      topic: "IUCN Red List assessments",
      site: "iucnredlist.org",
      page: {
        title: `${genus} - The IUCN Red List of Threatened Species`,
        url: `https://www.iucnredlist.org/search?query=${genus}&searchType=species`,
      },
      alt: { title: `${genus} - Wikipedia`, url: `https://en.wikipedia.org/wiki/${genus}` },
      noun: "species",
      criterion: "assessed as Endangered (EN)",
      header: ["Species", "Category", "Assessed"],
      rows,
      matches: (r) => r[1] === "EN",
      pageSize: 20,
    };
  },
});

const michelinCities = ["Lyon", "Copenhagen", "Kyoto", "Barcelona", "Chicago"];

const michelinCount = countFamily<string>({
  id: "web.michelin-count",
  modes: ["early-stop", "wrong-page", "filter-ignored"],
  variants: michelinCities,
  subject: (city, rng, wording) => {
    const rows: string[][] = [];
    const n = int(rng, 35, 80);
    for (let i = 0; i < n; i += 1)
      rows.push([
        `${pick(rng, ["La", "Le", "Maison", "Casa", "Restaurant", "Kitchen"])} ${placeName(rng).split(/\s/)[0] ?? "Nord"}`,
        pick(rng, ["1 Star", "1 Star", "1 Star", "2 Stars", "3 Stars", "Bib Gourmand"]),
        pick(rng, ["Modern Cuisine", "Creative", "Seafood", "Traditional"]),
      ]);
    return {
      question: at(
        [
          `How many restaurants in ${city} hold two or more Michelin stars in the 2023 MICHELIN Guide?`,
          `In the 2023 edition of the MICHELIN Guide, how many ${city} restaurants have at least two stars?`,
        ],
        wording,
      ),
      query: `MICHELIN Guide 2023 ${city} restaurants stars`,
      topic: "MICHELIN Guide selections",
      site: "guide.michelin.com",
      page: {
        title: `${city} - MICHELIN Guide restaurants 2023`,
        url: `https://guide.michelin.com/en/restaurants/${city.toLowerCase()}/2023`,
      },
      alt: {
        title: `${city} - MICHELIN Guide restaurants 2021`,
        url: `https://guide.michelin.com/en/restaurants/${city.toLowerCase()}/2021`,
      },
      noun: "restaurants",
      criterion: "holding two or three stars",
      header: ["Restaurant", "Distinction", "Cuisine"],
      rows,
      matches: (r) => r[1] === "2 Stars" || r[1] === "3 Stars",
      pageSize: 20,
    };
  },
});

const snapshotSites = [
  "brightlineferries.com",
  "oldmillbakery.co.uk",
  "northfieldlibrary.org",
  "kestrelbikes.net",
  "harbourlightsfestival.org",
];

const waybackFirst = countFamily<string>({
  id: "web.wayback-snapshots",
  modes: ["early-stop", "guess", "stale-snippet"],
  variants: snapshotSites,
  subject: (site, rng, wording) => {
    const rows: string[][] = [];
    const n = int(rng, 40, 75);
    let t = Date.UTC(2009, int(rng, 0, 11), int(rng, 1, 28));
    for (let i = 0; i < n; i += 1) {
      t += int(rng, 5, 90) * 86_400_000;
      rows.push([
        new Date(t).toISOString().slice(0, 10).replace(/-/g, ""),
        pick(rng, ["200", "200", "200", "301", "302", "404"]),
        `${int(rng, 8, 120)} KB`,
      ]);
    }
    return {
      question: at(
        [
          `How many snapshots of ${site} with HTTP status 200 did the Wayback Machine capture between 2009 and 2019?`,
          `Using the Internet Archive's Wayback Machine, count the successful (status 200) captures of ${site} from 2009 to 2019.`,
        ],
        wording,
      ),
      query: `web.archive.org ${site} captures`,
      topic: "Wayback Machine captures",
      site: "web.archive.org",
      page: {
        title: `Wayback Machine CDX listing for ${site}`,
        url: `https://web.archive.org/cdx/search/cdx?url=${site}&from=2009&to=2019`,
      },
      alt: { title: `${site} - site info and history`, url: `https://www.siteinfo.example.com/${site}` },
      noun: "captures",
      criterion: "status 200",
      header: ["Timestamp", "Status", "Length"],
      rows,
      matches: (r) => r[1] === "200",
      pageSize: 25,
    };
  },
});

// ---- price comparisons ----

interface Product {
  name: string;
  config: string;
  otherConfig: string;
  priceEur: number;
  priceGbp: number;
}

const laptops: Product[] = [
  {
    name: "Framewell 14 Pro",
    config: "16 GB / 512 GB",
    otherConfig: "8 GB / 256 GB",
    priceEur: 1349,
    priceGbp: 1149,
  },
  {
    name: "Zenline Air 13",
    config: "16 GB / 1 TB",
    otherConfig: "16 GB / 512 GB",
    priceEur: 1199,
    priceGbp: 1049,
  },
  { name: "Corvid X15", config: "32 GB / 1 TB", otherConfig: "16 GB / 1 TB", priceEur: 2099, priceGbp: 1799 },
  {
    name: "Lumen Book 16",
    config: "16 GB / 512 GB",
    otherConfig: "32 GB / 512 GB",
    priceEur: 1549,
    priceGbp: 1329,
  },
  {
    name: "Tessel Flip 14",
    config: "8 GB / 512 GB",
    otherConfig: "8 GB / 256 GB",
    priceEur: 899,
    priceGbp: 779,
  },
];

const trains: Product[] = [
  {
    name: "Paris → Amsterdam, 14 June",
    config: "Standard, semi-flexible",
    otherConfig: "Comfort, flexible",
    priceEur: 89,
    priceGbp: 76,
  },
  {
    name: "Brussels → Cologne, 3 May",
    config: "Standard, non-flexible",
    otherConfig: "Premium, flexible",
    priceEur: 39,
    priceGbp: 34,
  },
  {
    name: "London → Paris, 21 March",
    config: "Standard",
    otherConfig: "Standard Premier",
    priceEur: 71,
    priceGbp: 61,
  },
  {
    name: "Zurich → Milan, 9 September",
    config: "2nd class, saver",
    otherConfig: "1st class, flexible",
    priceEur: 29,
    priceGbp: 25,
  },
  {
    name: "Vienna → Munich, 2 October",
    config: "Sparschiene 2nd class",
    otherConfig: "Standard 2nd class",
    priceEur: 34.9,
    priceGbp: 29.9,
  },
];

interface CompareSpec {
  id: string;
  modes: readonly [string, string, string];
  variants: readonly Product[];
  shopA: string;
  shopB: string;
  urlA: (p: Product) => string;
  urlB: (p: Product) => string;
  topic: string;
  questions: readonly ((p: Product, a: string, b: string) => string)[];
  eurUsd: number;
  gbpUsd: number;
}

function compareFamily(spec: CompareSpec): AnyFamily {
  return defineFamily<Product>({
    id: spec.id,
    domain: "web",
    modes: spec.modes,
    variants: spec.variants,
    build(mode, p, ctx) {
      const { rng } = ctx;
      const usdA = Math.round(p.priceEur * spec.eurUsd * 100) / 100;
      const question = at(spec.questions, ctx.wording)(p, spec.shopA, spec.shopB);
      const shopPage = (shop: string, url: string, lines: string[]) =>
        webSurferMessage(
          `I typed '${url}' into the browser address bar.`,
          `${p.name} - ${shop}`,
          url,
          rng,
          [p.name, ...lines, prose(rng, ctx.big ? 3 : 2, spec.topic)].join("\n"),
        );
      const lookA: StepSpec[] = [
        ...step.delegate(
          "WebSurfer",
          `Open ${spec.shopA} and report the price of ${p.name} (${p.config}).`,
          "No prices collected yet.",
        ),
        step.browse(
          `I typed '${spec.urlA(p)}' into the browser address bar.`,
          `visit_url("${spec.urlA(p)}")`,
        ),
        step.page(
          shopPage(spec.shopA, spec.urlA(p), [
            `Option: ${p.config} — €${p.priceEur.toFixed(2)} incl. VAT`,
            `Option: ${p.otherConfig} — €${(p.priceEur * 0.85).toFixed(2)} incl. VAT`,
            "Prices in EUR. Delivery 2–4 working days.",
          ]),
        ),
        step.say("WebSurfer", `${spec.shopA} lists ${p.name} (${p.config}) at €${p.priceEur.toFixed(2)}.`),
      ];
      const base = {
        question,
        style: "magentic" as const,
        team: ["Orchestrator", "WebSurfer", "Assistant"] as Scenario["team"],
        detourKind: "web" as const,
        detourCtx: { topic: spec.topic, site: spec.shopA, url: spec.urlA(p) },
        sheet: {
          given: [`The item is ${p.name} (${p.config}).`, "The difference must be given in USD."],
          lookup: [
            `The price at ${spec.shopA}.`,
            `The price at ${spec.shopB}.`,
            "Exchange rates to USD on the day.",
          ],
          derive: ["Both prices in USD and their difference."],
          guesses: [`${spec.shopA} prices in EUR and ${spec.shopB} in GBP.`],
          plan: [
            `WebSurfer reports both prices for exactly ${p.config}.`,
            "WebSurfer looks up the EUR→USD and GBP→USD rates.",
            "Assistant converts both prices to USD and computes the difference.",
          ],
        },
        opening: lookA,
      };
      const rates: StepSpec[] = [
        step.browse(
          "I typed 'EUR USD GBP USD exchange rate' into '0 characters out of 2000'.",
          'web_search(query="EUR USD GBP USD exchange rate")',
        ),
        step.page(
          webSurferMessage(
            "I typed 'EUR USD GBP USD exchange rate' into '0 characters out of 2000'.",
            "EUR USD GBP USD exchange rate - Search",
            "https://www.bing.com/search?q=EUR+USD+GBP+USD",
            rng,
            `1 Euro equals ${spec.eurUsd} United States Dollar\n1 British Pound equals ${spec.gbpUsd} United States Dollar\n${prose(rng, 2, "exchange rates")}`,
          ),
        ),
      ];
      const lookB = (price: number, config: string): StepSpec[] => [
        ...step.delegate(
          "WebSurfer",
          `Now open ${spec.shopB} and report the price of ${p.name} (${p.config}).`,
        ),
        step.browse(
          `I typed '${spec.urlB(p)}' into the browser address bar.`,
          `visit_url("${spec.urlB(p)}")`,
        ),
        step.page(
          shopPage(spec.shopB, spec.urlB(p), [
            `${p.otherConfig} — £${(p.priceGbp * 0.86).toFixed(2)}`,
            `${p.config} — £${p.priceGbp.toFixed(2)}`,
            "All prices in GBP.",
          ]),
        ),
        step.say(
          "WebSurfer",
          `${spec.shopB} lists ${p.name} (${config}) at £${price.toFixed(2)}.`,
          config !== p.config,
        ),
      ];
      switch (mode) {
        case "currency": {
          const diff = Math.abs(p.priceEur - p.priceGbp).toFixed(2);
          return {
            ...base,
            answer: `${spec.shopB}, by $${diff}`,
            core: [
              ...lookB(p.priceGbp, p.config),
              ...rates,
              step.say(
                "Assistant",
                `${spec.shopA}: ${p.priceEur.toFixed(2)}. ${spec.shopB}: ${p.priceGbp.toFixed(2)}. The difference is ${p.priceEur.toFixed(2)} − ${p.priceGbp.toFixed(2)} = ${diff}, so ${spec.shopB} is cheaper by $${diff}.`,
                true,
              ),
              step.ledger({
                satisfied: true,
                satisfiedReason: "Assistant computed the difference.",
                next: "Orchestrator",
                instruction: "Prepare the final answer.",
              }),
            ],
          };
        }
        case "wrong-variant": {
          const wrongB = Math.round(p.priceGbp * 0.86 * 100) / 100;
          const diff = Math.abs(usdA - wrongB * spec.gbpUsd).toFixed(2);
          return {
            ...base,
            answer: `${spec.shopB}, by $${diff}`,
            core: [
              ...lookB(wrongB, p.otherConfig),
              ...rates,
              step.say(
                "Assistant",
                `In USD: ${spec.shopA} $${usdA.toFixed(2)}, ${spec.shopB} $${(wrongB * spec.gbpUsd).toFixed(2)}. ${spec.shopB} is cheaper by $${diff}.`,
              ),
              step.ledger({
                satisfied: true,
                satisfiedReason: "Both prices are in and converted.",
                next: "Orchestrator",
                instruction: "Prepare the final answer.",
              }),
            ],
          };
        }
        case "guess": {
          const assumed = Math.round(p.priceEur * 0.9);
          const diff = Math.abs(usdA - assumed * spec.gbpUsd).toFixed(2);
          return {
            ...base,
            answer: `${spec.shopB}, by $${diff}`,
            core: [
              ...step.delegate(
                "WebSurfer",
                `Now open ${spec.shopB} and report the price of ${p.name} (${p.config}).`,
              ),
              step.browse(
                `I typed '${spec.urlB(p)}' into the browser address bar.`,
                `visit_url("${spec.urlB(p)}")`,
              ),
              step.page(
                `${spec.shopB}\nSorry, we couldn't find that page.\nNo results found for "${p.name}".`,
                { error: { message: "404 Not Found", code: "HTTP_404" } },
              ),
              step.ledger(
                {
                  satisfied: false,
                  satisfiedReason: `${spec.shopB} returned no results. I could not find the exact price, so I will assume it is about £${assumed}, roughly the usual UK discount, and let Assistant compute the difference.`,
                  progress: false,
                  progressReason: "The product page was not found.",
                  next: "Assistant",
                  instruction: `Use £${assumed} for ${spec.shopB} and compute the difference in USD.`,
                },
                true,
              ),
              ...rates,
              step.say(
                "Assistant",
                `${spec.shopA} $${usdA.toFixed(2)} vs ${spec.shopB} $${(assumed * spec.gbpUsd).toFixed(2)}: ${spec.shopB} is cheaper by $${diff}.`,
              ),
            ],
          };
        }
        default:
          return unknownMode(spec.id, mode);
      }
    },
  });
}

const laptopPrices = compareFamily({
  id: "web.laptop-price",
  modes: ["currency", "wrong-variant", "guess"],
  variants: laptops,
  shopA: "techstore.de",
  shopB: "laptopworld.co.uk",
  urlA: (p) => `https://www.techstore.de/p/${p.name.toLowerCase().replace(/ /g, "-")}`,
  urlB: (p) => `https://www.laptopworld.co.uk/laptops/${p.name.toLowerCase().replace(/ /g, "-")}`,
  topic: "laptop prices",
  questions: [
    (p, a, b) =>
      `Which shop sells the ${p.name} with ${p.config} for less, ${a} or ${b}, and by how much in US dollars at today's exchange rates?`,
    (p, a, b) =>
      `Compare the price of the ${p.name} (${p.config}) at ${a} and at ${b}. Which is cheaper, and what is the difference in USD?`,
  ],
  eurUsd: 1.08,
  gbpUsd: 1.27,
});

const trainFares = compareFamily({
  id: "web.train-fare",
  modes: ["wrong-variant", "guess", "currency"],
  variants: trains,
  shopA: "the operator's own site",
  shopB: "a UK rail booking site",
  urlA: (p) => `https://www.rail-operator.example.eu/booking?route=${encodeURIComponent(p.name)}`,
  urlB: (p) => `https://www.railbookings.example.co.uk/journeys?route=${encodeURIComponent(p.name)}`,
  topic: "train fares",
  questions: [
    (p, a, b) =>
      `For the train ${p.name}, what is the cheaper price for a ${p.config} ticket: ${a} or ${b}? Give the difference in USD.`,
    (p, a, b) =>
      `Is a ${p.config} ticket for ${p.name} cheaper on ${a} or on ${b}, and by how many US dollars?`,
  ],
  eurUsd: 1.08,
  gbpUsd: 1.27,
});

export const webFamilies: AnyFamily[] = [
  cityPopulation,
  olympicGold,
  mountainElevation,
  companyRevenue,
  bookPages,
  pressDate,
  releaseDate,
  exhibitionDate,
  discography,
  arxivCount,
  redlistCount,
  michelinCount,
  waybackFirst,
  laptopPrices,
  trainFares,
];
