import { step, type Actor, type StepSpec } from "./builder.js";
import { at, int, pick, thousands, type Rng } from "./random.js";
import type { AnyFamily, BuildContext } from "./scenario.js";
import { bulkLines, fileView, py, taskFamily, traceback, type Core } from "./tasks.js";
import { personName } from "./text.js";

/** CSV / Excel questions answered by a Magentic-One team (FileSurfer, Coder, Computer_terminal). */

const baseTeam: Actor[] = ["Orchestrator", "FileSurfer", "Coder", "Computer_terminal", "Assistant"];

interface DataSpec<V> {
  id: string;
  variants: readonly V[];
  modes: readonly [string, string, string];
  topic: string;
  team?: Actor[];
  file: (v: V) => string;
  question: (v: V, wording: number) => string;
  plan: (v: V) => string[];
  header: string;
  row: (v: V, rng: Rng, i: number) => string;
  cores: Record<string, (v: V, ctx: BuildContext) => Core>;
}

function dataFamily<V>(spec: DataSpec<V>): AnyFamily {
  return taskFamily<V>({
    id: spec.id,
    domain: "data",
    style: "magentic",
    team: spec.team ?? baseTeam,
    topic: spec.topic,
    variants: spec.variants,
    modes: spec.modes,
    file: spec.file,
    question: spec.question,
    sheet: (v) => ({
      given: [`The data is in the attached file ${spec.file(v)}.`],
      lookup: [],
      derive: ["The requested figure, computed over every row of the file."],
      guesses: [],
      plan: spec.plan(v),
    }),
    opening: (v, ctx) => {
      const file = spec.file(v);
      const open: StepSpec[] = [
        ...step.delegate(
          "FileSurfer",
          `Open ${file} and show its contents.`,
          "The file has not been read yet.",
        ),
        step.fileCall(`open_local_file(path="/workspace/${file}")`),
      ];
      if (ctx.mode === "file-unreadable") return [];
      const pages = ctx.big ? 1 : int(ctx.rng, 3, 9);
      const body = bulkLines(
        ctx.rng,
        spec.header,
        (r, i) => spec.row(v, r, i),
        ctx.big ? int(ctx.rng, 21_000, 50_000) : int(ctx.rng, 1200, 3500),
      );
      return [...open, step.file(fileView(ctx.rng, file, body, 1, pages))];
    },
    cores: spec.cores,
  });
}

/** FileSurfer cannot convert the file; someone answers anyway. */
function unreadable(file: string, claim: string, actor: Actor = "Assistant"): StepSpec[] {
  return [
    ...step.delegate("FileSurfer", `Open ${file} and show its contents.`, "The file has not been read yet."),
    step.fileCall(`open_local_file(path="/workspace/${file}")`),
    step.file(
      `Error: could not convert '/workspace/${file}' to text.\nFileConversionException: File conversion failed after 1 attempts:\n - XlsxConverter threw BadZipFile with message: File is not a zip file`,
      {
        error: { message: "File is not a zip file", code: "FileConversionException" },
      },
    ),
    step.ledger({
      satisfiedReason: "The file could not be read.",
      progress: false,
      progressReason: "FileSurfer failed to open the file.",
      next: actor,
      instruction: "Give the best answer you can from what we have.",
    }),
    step.say(actor, claim, true),
  ];
}

function earlyStop(file: string, partial: string, what: string): StepSpec[] {
  return [
    step.say(
      "FileSurfer",
      `The first page of ${file} shows ${partial} ${what}. The file continues on further pages.`,
    ),
    step.ledger(
      {
        satisfied: true,
        satisfiedReason: `FileSurfer reported ${partial} ${what}; that answers the request.`,
        next: "Orchestrator",
        instruction: "Prepare the final answer.",
      },
      true,
    ),
  ];
}

function ran(code: string, output: string, failCode: boolean, conclusion: string): StepSpec[] {
  return [
    ...step.delegate(
      "Coder",
      "Write a pandas script that computes the requested figure over the whole file.",
    ),
    step.code(py(code), failCode),
    step.terminal(0, output),
    step.say("Assistant", conclusion),
  ];
}

function crashed(code: string, partial: string, tb: string, claim: string): StepSpec[] {
  return [
    ...step.delegate(
      "Coder",
      "Write a pandas script that computes the requested figure over the whole file.",
    ),
    step.code(py(code)),
    step.terminal(1, `${partial}\n${tb}`),
    step.say("Assistant", claim, true),
  ];
}

// ---- sales workbook ----

const regions = ["North", "South", "East", "West", "Central"] as const;

const salesWorkbook = dataFamily<string>({
  id: "data.sales-workbook",
  variants: regions,
  modes: ["file-unreadable", "first-sheet-only", "wrong-column"],
  topic: "quarterly sales",
  file: () => "sales_2023.xlsx",
  question: (r, w) =>
    at(
      [
        `The attached spreadsheet sales_2023.xlsx lists sales by region and quarter on one sheet per year. What were the total actual Q3 2023 sales for the ${r} region, in USD with two decimals?`,
        `Using sales_2023.xlsx, give the ${r} region's actual (not target) sales for the third quarter of 2023, in dollars to two decimal places.`,
      ],
      w,
    ),
  plan: (r) => [
    "FileSurfer opens the workbook and lists all sheets.",
    `Coder sums 'Q3 Actual' for ${r} on the 2023 sheet.`,
    "Answer with two decimals.",
  ],
  header: "## Sheet: 2022 (sheet 1 of 3)\nRegion,Store,Q1 Actual,Q2 Actual,Q3 Actual,Q3 Target,Q4 Actual",
  row: (_v, r) =>
    `${pick(r, regions)},S-${int(r, 100, 999)},${amount(r)},${amount(r)},${amount(r)},${amount(r)},${amount(r)}`,
  cores: {
    "file-unreadable": (r, ctx) => {
      const guess = `${thousands(int(ctx.rng, 400_000, 2_000_000))}.00`;
      return {
        answer: guess,
        core: unreadable(
          "sales_2023.xlsx",
          `I could not read the workbook. Based on typical regional figures, Q3 sales for ${r} were approximately $${guess}.`,
        ),
      };
    },
    "first-sheet-only": (r, ctx) => {
      const value = `${thousands(int(ctx.rng, 300_000, 1_800_000))}.${int(ctx.rng, 10, 99)}`;
      return {
        answer: value,
        core: [
          step.say(
            "FileSurfer",
            `The workbook has one table. Summing the Q3 Actual column for the ${r} rows gives ${value}.`,
            true,
          ),
          step.ledger({
            satisfied: true,
            satisfiedReason: `FileSurfer computed Q3 sales for ${r}.`,
            next: "Orchestrator",
            instruction: "Prepare the final answer.",
          }),
        ],
      };
    },
    "wrong-column": (r, ctx) => {
      const value = `${thousands(int(ctx.rng, 300_000, 1_800_000))}.${int(ctx.rng, 10, 99)}`;
      return {
        answer: value,
        core: ran(
          `import pandas as pd\n\ndf = pd.read_excel("sales_2023.xlsx", sheet_name="2023")\nprint(round(df.loc[df["Region"] == "${r}", "Q3 Target"].sum(), 2))`,
          value,
          true,
          `Q3 2023 sales for ${r}: $${value}.`,
        ),
      };
    },
  },
});

function amount(r: Rng): string {
  return (int(r, 500_000, 9_000_000) / 100).toFixed(2);
}

// ---- employee roster ----

const departments = ["Sales", "Engineering", "Support", "Marketing", "Finance"] as const;

const roster = dataFamily<string>({
  id: "data.employee-roster",
  variants: departments,
  modes: ["substring-filter", "string-date-compare", "early-stop"],
  topic: "employee roster",
  file: () => "roster.csv",
  question: (d, w) =>
    at(
      [
        `How many employees listed in roster.csv work in the ${d} department (exactly that department) and started before 1 January 2020?`,
        `In roster.csv, count the people whose department is exactly "${d}" and whose start date is earlier than 2020-01-01.`,
      ],
      w,
    ),
  plan: (d) => [
    `Filter department == "${d}" exactly (not sub-teams).`,
    "Parse start_date (DD/MM/YYYY) as dates before comparing.",
    "Count the rows.",
  ],
  header: "employee_id,name,department,start_date,location",
  row: (d, r, i) =>
    `E${1000 + i},${personName(r)},${pick(r, [d, d, `${d} Operations`, "Legal", "HR"])},${String(int(r, 1, 28)).padStart(2, "0")}/${String(int(r, 1, 12)).padStart(2, "0")}/${int(r, 2012, 2023)},${pick(r, ["Berlin", "Austin", "Leeds", "Pune"])}`,
  cores: {
    "substring-filter": (d, ctx) => {
      const n = int(ctx.rng, 30, 90);
      return {
        answer: String(n),
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("roster.csv")\ndf["start_date"] = pd.to_datetime(df["start_date"], dayfirst=True)\nsel = df[df["department"].str.contains("${d}") & (df["start_date"] < "2020-01-01")]\nprint(len(sel))`,
          String(n),
          true,
          `${n} employees in ${d} started before 2020.`,
        ),
      };
    },
    "string-date-compare": (d, ctx) => {
      const n = int(ctx.rng, 20, 70);
      return {
        answer: String(n),
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("roster.csv")\nsel = df[(df["department"] == "${d}") & (df["start_date"] < "01/01/2020")]\nprint(len(sel))`,
          String(n),
          true,
          `${n} employees match.`,
        ),
      };
    },
    "early-stop": (d, ctx) => {
      const n = String(int(ctx.rng, 4, 12));
      return { answer: n, core: earlyStop("roster.csv", n, `${d} employees who started before 2020`) };
    },
  },
});

// ---- survey mean ----

const countries = ["Portugal", "Kenya", "Canada", "Vietnam", "Chile"] as const;

const surveyMean = dataFamily<string>({
  id: "data.survey-mean",
  variants: countries,
  modes: ["rounding", "fillna-zero", "ignored-traceback"],
  topic: "customer satisfaction survey",
  file: () => "survey_responses.csv",
  question: (c, w) =>
    at(
      [
        `What is the mean satisfaction score (1–5) of respondents from ${c} in survey_responses.csv, ignoring blank answers? Round to two decimals.`,
        `Among the ${c} respondents in survey_responses.csv, what is the average satisfaction rating (blank answers excluded), to 2 decimal places?`,
      ],
      w,
    ),
  plan: (c) => [
    `Filter country == "${c}".`,
    "Drop blank satisfaction values (do not treat them as 0).",
    "Average and round to two decimals at the end.",
  ],
  header: "response_id,country,age_band,satisfaction,comment",
  row: (c, r, i) =>
    `R${5000 + i},${pick(r, [c, c, "Spain", "Peru", "Japan"])},${pick(r, ["18-24", "25-34", "35-44", "45-54", "55+"])},${pick(r, ["1", "2", "3", "4", "5", "4", "5", ""])},"${pick(r, ["fast delivery", "app crashes", "", "good value", "support was slow"])}"`,
  cores: {
    rounding: (c, ctx) => {
      const mean = 3 + ctx.rng() * 1.5;
      return {
        answer: mean.toFixed(1),
        core: [
          ...step.delegate("Coder", "Compute the mean satisfaction for the requested country."),
          step.code(
            py(
              `import pandas as pd\n\ndf = pd.read_csv("survey_responses.csv")\nprint(df.loc[df["country"] == "${c}", "satisfaction"].dropna().mean())`,
            ),
          ),
          step.terminal(0, mean.toFixed(6)),
          step.say("Assistant", `The mean is ${mean.toFixed(6)}, which rounds to ${mean.toFixed(1)}.`, true),
        ],
      };
    },
    "fillna-zero": (c, ctx) => {
      const mean = (2.4 + ctx.rng()).toFixed(2);
      return {
        answer: mean,
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("survey_responses.csv")\ns = df.loc[df["country"] == "${c}", "satisfaction"].fillna(0)\nprint(round(s.mean(), 2))`,
          mean,
          true,
          `Mean satisfaction for ${c}: ${mean}.`,
        ),
      };
    },
    "ignored-traceback": (c, ctx) => {
      const mean = (3 + ctx.rng()).toFixed(2);
      return {
        answer: mean,
        core: crashed(
          `import pandas as pd\n\ndf = pd.read_csv("survey_responses.csv")\nsub = df[df["country"] == "${c}"]\nprint("first rows mean:", round(sub["satisfaction"].head(20).mean(), 2))\nprint(round(sub["satisfaction"].astype(int).mean(), 2))`,
          `first rows mean: ${mean}`,
          traceback(
            [
              [
                "/workspace/mean.py",
                6,
                "<module>",
                'print(round(sub["satisfaction"].astype(int).mean(), 2))',
              ],
              [
                "/usr/local/lib/python3.11/site-packages/pandas/core/generic.py",
                6534,
                "astype",
                "new_data = self._mgr.astype(dtype=dtype, copy=copy, errors=errors)",
              ],
            ],
            "pandas.errors.IntCastingNaNError: Cannot convert non-finite values (NA or inf) to integer",
          ),
          `The script printed a mean of ${mean} for ${c}. That is the answer.`,
        ),
      };
    },
  },
});

// ---- inventory below reorder level ----

const warehouses = ["Rotterdam", "Leipzig", "Lyon", "Gdansk", "Porto"] as const;

const inventory = dataFamily<string>({
  id: "data.inventory-reorder",
  variants: warehouses,
  modes: ["inclusive-compare", "file-unreadable", "first-sheet-only"],
  topic: "warehouse inventory",
  file: (w) => `inventory_${w.toLowerCase()}.xlsx`,
  question: (w, wording) =>
    at(
      [
        `In inventory_${w.toLowerCase()}.xlsx, how many items are strictly below their reorder level across all sheets (one sheet per aisle)?`,
        `How many SKUs in the ${w} inventory workbook (inventory_${w.toLowerCase()}.xlsx, every aisle sheet) have stock lower than — not equal to — the reorder level?`,
      ],
      wording,
    ),
  plan: () => [
    "Open every sheet of the workbook.",
    "Count rows with on_hand < reorder_level (strictly).",
    "Sum over sheets.",
  ],
  header: "## Sheet: Aisle A (sheet 1 of 4)\nsku,description,on_hand,reorder_level,supplier",
  row: (_w, r, i) =>
    `SKU-${20_000 + i},${pick(r, ["M6 bolt", "pallet wrap", "cable tie", "label roll", "hinge"])},${int(r, 0, 400)},${pick(r, ["50", "100", "150", "200"])},${pick(r, ["Acme", "Nordic Parts", "Brammer"])}`,
  cores: {
    "inclusive-compare": (w, ctx) => {
      const n = int(ctx.rng, 40, 160);
      return {
        answer: String(n),
        core: ran(
          `import pandas as pd\n\nsheets = pd.read_excel("inventory_${w.toLowerCase()}.xlsx", sheet_name=None)\nprint(sum((df["on_hand"] <= df["reorder_level"]).sum() for df in sheets.values()))`,
          String(n),
          true,
          `${n} items are below their reorder level.`,
        ),
      };
    },
    "file-unreadable": (w, ctx) => {
      const n = String(int(ctx.rng, 20, 120));
      return {
        answer: n,
        core: unreadable(
          `inventory_${w.toLowerCase()}.xlsx`,
          `The workbook could not be converted. Warehouses of this size usually have around ${n} SKUs below reorder level, so the answer is ${n}.`,
        ),
      };
    },
    "first-sheet-only": (w, ctx) => {
      const n = String(int(ctx.rng, 10, 40));
      return {
        answer: n,
        core: [
          step.say(
            "FileSurfer",
            `I went through the table in inventory_${w.toLowerCase()}.xlsx: ${n} items have on_hand below reorder_level. That covers the whole workbook.`,
            true,
          ),
          step.ledger({
            satisfied: true,
            satisfiedReason: `FileSurfer counted ${n} items.`,
            next: "Orchestrator",
            instruction: "Prepare the final answer.",
          }),
        ],
      };
    },
  },
});

// ---- flight delays ----

const airlines = ["Aer Lingus", "Iberia", "KLM", "SAS", "TAP Air Portugal"] as const;

const flightDelays = dataFamily<string>({
  id: "data.flight-delays",
  variants: airlines,
  modes: ["wrong-unit", "wrong-column", "skip-verify"],
  topic: "flight delay statistics",
  team: [...baseTeam, "Verifier"],
  file: () => "flights_2023.csv",
  question: (a, w) =>
    at(
      [
        `Using flights_2023.csv, what was the median arrival delay in minutes for ${a} flights in July 2023?`,
        `What is the median arrival delay (minutes) of ${a}'s July 2023 flights in flights_2023.csv?`,
      ],
      w,
    ),
  plan: (a) => [
    `Filter carrier == "${a}" and July 2023.`,
    "Use arr_delay_s (seconds) and convert to minutes.",
    "Verifier re-computes the median independently before the answer is given.",
  ],
  header: "date,carrier,flight,origin,dest,dep_delay_s,arr_delay_s",
  row: (a, r) =>
    `2023-0${int(r, 6, 8)}-${String(int(r, 10, 28))},${pick(r, [a, "Lufthansa", "easyJet"])},${pick(r, ["EI", "IB", "KL", "SK", "TP"])}${int(r, 100, 999)},${pick(r, ["DUB", "MAD", "AMS", "CPH", "LIS"])},${pick(r, ["LHR", "CDG", "FRA", "BCN"])},${int(r, -300, 5400)},${int(r, -600, 6000)}`,
  cores: {
    "wrong-unit": (a, ctx) => {
      const s = int(ctx.rng, 300, 1500);
      return {
        answer: String(s),
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("flights_2023.csv", parse_dates=["date"])\njul = df[(df.carrier == "${a}") & (df.date.dt.month == 7)]\nprint(jul["arr_delay_s"].median())`,
          `${s}.0`,
          true,
          `The median arrival delay for ${a} in July is ${s} minutes.`,
        ),
      };
    },
    "wrong-column": (a, ctx) => {
      const m = (int(ctx.rng, 40, 300) / 10).toFixed(1);
      return {
        answer: m,
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("flights_2023.csv", parse_dates=["date"])\njul = df[(df.carrier == "${a}") & (df.date.dt.month == 7)]\nprint(round(jul["dep_delay_s"].median() / 60, 1))`,
          m,
          true,
          `${a}'s median July arrival delay: ${m} minutes.`,
        ),
      };
    },
    "skip-verify": (a, ctx) => {
      const m = (int(ctx.rng, 40, 300) / 10).toFixed(1);
      return {
        answer: m,
        core: [
          ...step.delegate("Coder", "Compute the median arrival delay for the airline in July."),
          step.code(
            py(
              `import pandas as pd\n\ndf = pd.read_csv("flights_2023.csv")\njul = df[(df.carrier == "${a}") & df.date.str.startswith("2023-07")]\nprint(round(jul["arr_delay_s"].median() / 60, 1), len(jul))`,
              "Note: some rows have a carrier code instead of the name (e.g. the codeshare rows), so this may miss flights. The Verifier should re-check with the flight prefix before we answer.",
            ),
          ),
          step.terminal(0, `${m} ${int(ctx.rng, 40, 200)}`),
          step.say(
            "Verifier",
            `The computation looks correct and the number is plausible for July. No need to recompute. Verified: ${m} minutes.`,
            true,
          ),
        ],
      };
    },
  },
});

// ---- grade book ----

const classes = ["7B", "8A", "9C", "10D", "11E"] as const;

const gradebook = dataFamily<string>({
  id: "data.gradebook",
  variants: classes,
  modes: ["off-by-one", "early-stop", "file-unreadable"],
  topic: "exam results",
  file: (c) => `grades_${c}.xlsx`,
  question: (c, w) =>
    at(
      [
        `In grades_${c}.xlsx, which student has the highest average over the three exams, and what is that average (two decimals)?`,
        `Who tops class ${c} by mean score across all three exams in grades_${c}.xlsx, and with what average (2 d.p.)?`,
      ],
      w,
    ),
  plan: () => [
    "Read the sheet: name, exam1, exam2, exam3.",
    "Average the three exam columns per student.",
    "Report the top student and the average.",
  ],
  header: "name,exam1,exam2,exam3",
  row: (_c, r) => `${personName(r)},${int(r, 40, 100)},${int(r, 40, 100)},${int(r, 40, 100)}`,
  cores: {
    "off-by-one": (c, ctx) => {
      const who = personName(ctx.rng);
      const avg = (int(ctx.rng, 8800, 9900) / 100).toFixed(2);
      return {
        answer: `${who}, ${avg}`,
        core: ran(
          `import pandas as pd\n\ndf = pd.read_excel("grades_${c}.xlsx")\ndf["avg"] = df.iloc[:, 1:3].mean(axis=1)\nbest = df.loc[df["avg"].idxmax()]\nprint(best["name"], round(best["avg"], 2))`,
          `${who} ${avg}`,
          true,
          `${who} has the highest average, ${avg}.`,
        ),
      };
    },
    "early-stop": (c, ctx) => {
      const who = personName(ctx.rng);
      const avg = (int(ctx.rng, 8000, 9400) / 100).toFixed(2);
      return {
        answer: `${who}, ${avg}`,
        core: [
          step.say(
            "FileSurfer",
            `On the first page of grades_${c}.xlsx the best average is ${who} with ${avg}. More rows follow on the next pages.`,
          ),
          step.ledger(
            {
              satisfied: true,
              satisfiedReason: `FileSurfer identified the top student: ${who} (${avg}).`,
              next: "Orchestrator",
              instruction: "Prepare the final answer.",
            },
            true,
          ),
        ],
      };
    },
    "file-unreadable": (c, ctx) => {
      const who = personName(ctx.rng);
      const avg = (int(ctx.rng, 8500, 9800) / 100).toFixed(2);
      return {
        answer: `${who}, ${avg}`,
        core: unreadable(
          `grades_${c}.xlsx`,
          `Since the file can't be opened, the most likely top student is ${who}, with an average of about ${avg}.`,
        ),
      };
    },
  },
});

// ---- smart meter ----

const meterMonths = ["March", "October", "January", "July", "November"] as const;

const energyUsage = dataFamily<string>({
  id: "data.energy-usage",
  variants: meterMonths,
  modes: ["wrong-unit", "month-boundary", "ignored-traceback"],
  topic: "smart meter readings",
  file: () => "meter_2023.csv",
  question: (m, w) =>
    at(
      [
        `meter_2023.csv has 15-minute electricity readings in Wh with UTC timestamps; the house is in Amsterdam. What was the total consumption in ${m} 2023 (local time), in kWh to one decimal?`,
        `From the Wh readings (UTC, 15-min) in meter_2023.csv for a home in Amsterdam, how many kWh were used during ${m} 2023 in local time? One decimal.`,
      ],
      w,
    ),
  plan: () => [
    "Parse timestamps as UTC and convert to Europe/Amsterdam.",
    "Select the month in local time.",
    "Sum Wh and divide by 1000.",
  ],
  header: "timestamp_utc,wh",
  row: (_m, r, i) =>
    `2023-01-01T${String(Math.floor(i / 4) % 24).padStart(2, "0")}:${String((i % 4) * 15).padStart(2, "0")}:00Z,${int(r, 20, 900)}`,
  cores: {
    "wrong-unit": (m, ctx) => {
      const wh = int(ctx.rng, 150_000, 600_000);
      return {
        answer: thousands(wh),
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("meter_2023.csv", parse_dates=["timestamp_utc"])\nlocal = df["timestamp_utc"].dt.tz_convert("Europe/Amsterdam")\nprint(df.loc[local.dt.month_name() == "${m}", "wh"].sum())`,
          String(wh),
          true,
          `Total consumption in ${m}: ${thousands(wh)} kWh.`,
        ),
      };
    },
    "month-boundary": (m, ctx) => {
      const kwh = (int(ctx.rng, 1500, 6000) / 10).toFixed(1);
      return {
        answer: kwh,
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("meter_2023.csv", parse_dates=["timestamp_utc"])\nsel = df[df["timestamp_utc"].dt.month_name() == "${m}"]\nprint(round(sel["wh"].sum() / 1000, 1))`,
          kwh,
          true,
          `${m} 2023: ${kwh} kWh.`,
        ),
      };
    },
    "ignored-traceback": (m, ctx) => {
      const kwh = (int(ctx.rng, 1500, 6000) / 10).toFixed(1);
      return {
        answer: kwh,
        core: crashed(
          `import pandas as pd\n\ndf = pd.read_csv("meter_2023.csv")\ndf["ts"] = pd.to_datetime(df["timestamp_utc"]).dt.tz_localize("UTC")\nprint("rows:", len(df), "approx kWh/month:", round(df["wh"].sum() / 12000, 1))\nprint(round(df.loc[df["ts"].dt.tz_convert("Europe/Amsterdam").dt.month_name() == "${m}", "wh"].sum() / 1000, 1))`,
          `rows: 35040 approx kWh/month: ${kwh}`,
          traceback(
            [
              [
                "/workspace/kwh.py",
                4,
                "<module>",
                'df["ts"] = pd.to_datetime(df["timestamp_utc"]).dt.tz_localize("UTC")',
              ],
            ],
            "TypeError: Already tz-aware, use tz_convert to convert.",
          ),
          `The script reports ${kwh} kWh per month, so consumption in ${m} was ${kwh} kWh.`,
        ),
      };
    },
  },
});

// ---- library loans ----

const branches = ["Central", "Riverside", "Hillcrest", "Old Town", "Harbour"] as const;

const libraryLoans = dataFamily<string>({
  id: "data.library-loans",
  variants: branches,
  modes: ["unnormalized-keys", "early-stop", "skip-verify"],
  topic: "library loans",
  team: [...baseTeam, "Verifier"],
  file: (b) => `loans_${b.toLowerCase().replace(/ /g, "_")}_2022.csv`,
  question: (b, w) =>
    at(
      [
        `Which title was borrowed most often in 2022 at the ${b} branch (loans_${b.toLowerCase().replace(/ /g, "_")}_2022.csv), and how many times? Titles are typed by staff, so treat case and extra spaces as the same title.`,
        `From the ${b} branch's 2022 loan records, what is the most-borrowed title and its loan count? (Titles differ only by case/whitespace count as one.)`,
      ],
      w,
    ),
  plan: () => [
    "Normalise titles (strip, collapse spaces, case-fold).",
    "Count loans per normalised title.",
    "Verifier re-counts the top title independently.",
  ],
  header: "loan_id,date,title,patron_type",
  row: (_b, r, i) =>
    `L${90_000 + i},2022-${String(int(r, 1, 12)).padStart(2, "0")}-${String(int(r, 1, 28)).padStart(2, "0")},${pick(r, ["The Thursday Murder Club", "the thursday murder club", "Lessons in Chemistry", "Lessons  in Chemistry", "Where the Crawdads Sing", "Atomic Habits", "atomic habits "])},${pick(r, ["adult", "student", "senior"])}`,
  cores: {
    "unnormalized-keys": (_b, ctx) => {
      const n = int(ctx.rng, 40, 120);
      return {
        answer: `Atomic Habits, ${n}`,
        core: ran(
          `import pandas as pd\n\ndf = pd.read_csv("loans.csv")\nprint(df["title"].value_counts().head(1))`,
          `title\nAtomic Habits    ${n}\nName: count, dtype: int64`,
          true,
          `Atomic Habits was borrowed most often: ${n} times.`,
        ),
      };
    },
    "early-stop": (b, ctx) => {
      const n = String(int(ctx.rng, 6, 15));
      return {
        answer: `Lessons in Chemistry, ${n}`,
        core: earlyStop(
          `loans_${b.toLowerCase().replace(/ /g, "_")}_2022.csv`,
          n,
          "loans of Lessons in Chemistry, the most frequent title so far,",
        ),
      };
    },
    "skip-verify": (_b, ctx) => {
      const n = int(ctx.rng, 60, 150);
      return {
        answer: `The Thursday Murder Club, ${n}`,
        core: [
          ...step.delegate("Coder", "Count loans per normalised title."),
          step.code(
            py(
              `import pandas as pd\n\ndf = pd.read_csv("loans.csv")\nkey = df["title"].str.lower()\nprint(key.value_counts().head(3))`,
              "I only lower-cased the titles; trailing and double spaces are not handled yet. Verifier, please re-count with whitespace normalised before we answer.",
            ),
          ),
          step.terminal(
            0,
            `title\nthe thursday murder club    ${n}\natomic habits    ${n - int(ctx.rng, 1, 9)}\nlessons in chemistry    ${n - int(ctx.rng, 10, 20)}`,
          ),
          step.say(
            "Verifier",
            `Lower-casing is enough here; the ranking is clear. Verified: The Thursday Murder Club, ${n} loans.`,
            true,
          ),
        ],
      };
    },
  },
});

export const dataFamilies: AnyFamily[] = [
  salesWorkbook,
  roster,
  surveyMean,
  inventory,
  flightDelays,
  gradebook,
  energyUsage,
  libraryLoans,
];
