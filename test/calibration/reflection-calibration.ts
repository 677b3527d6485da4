import type { Attribution, Reflection, TaskCompleted } from "../../src/domain/contracts/index.js";
import { bigTrace, multiAgentFailures, type CorpusTrace } from "../support/corpus/multi-agent-failures.js";
import { exampleEvent } from "../support/examples.js";

/**
 * Reflections on failed tasks, labelled the way a careful reviewer labels real model output:
 * `good` (specific cause, executable fix), `vague`, `off_topic` (well formed but about another
 * failure), `incomplete` (a part a model sometimes leaves out is missing) and `duplicate` (the
 * lesson of an earlier good case, reworded, for a recurrence of the same mistake).
 */

export type CalibrationLabel = "good" | "vague" | "off_topic" | "incomplete" | "duplicate";

export interface CalibrationCase {
  id: string;
  label: CalibrationLabel;
  event: TaskCompleted;
  reflection: Reflection;
  /** For `duplicate`: the id of the good case whose lesson this one repeats. */
  duplicateOf?: string;
  why: string;
}

type Draft = Omit<Reflection, "importance" | "confidence" | "tags" | "errorCategory" | "strategyText"> &
  Partial<Pick<Reflection, "importance" | "confidence" | "tags" | "errorCategory" | "strategyText">>;

function reflection(draft: Draft): Reflection {
  return {
    strategyText: null,
    importance: 0.6,
    confidence: 0.7,
    tags: [],
    errorCategory: "evaluation_error",
    ...draft,
  };
}

class Corpus {
  private readonly traces = multiAgentFailures();

  /** The `n`-th trace (0 = the original, 1 = its recurrence) with this cause. */
  trace(causeId: string, n = 0): CorpusTrace {
    const found = this.traces.filter((t) => t.causeId === causeId)[n];
    if (!found) throw new Error(`no trace ${n} for ${causeId}`);
    return found;
  }
}

/** Attribution to the trace's failing step; the evidence must be a quote from that step. */
function blame(t: CorpusTrace, evidence: string, confidence: number): Attribution {
  const step = t.event.events[t.failingStepIndex];
  if (!step?.content.includes(evidence)) {
    throw new Error(`evidence not found in step ${t.failingStepIndex} of ${t.event.eventId}: ${evidence}`);
  }
  return {
    eventId: step.eventId,
    stepIndex: t.failingStepIndex,
    actor: t.failingActor,
    ...(step.toolName ? { toolName: step.toolName } : {}),
    confidence,
    evidence,
  };
}

function blameStep(
  event: TaskCompleted,
  stepIndex: number,
  evidence: string,
  confidence: number,
): Attribution {
  const step = event.events[stepIndex];
  if (!step?.content.includes(evidence))
    throw new Error(`evidence not found in ${event.eventId} step ${stepIndex}`);
  return {
    eventId: step.eventId,
    stepIndex,
    ...(step.actor ? { actor: step.actor } : {}),
    ...(step.toolName ? { toolName: step.toolName } : {}),
    confidence,
    evidence,
  };
}

function goodCases(c: Corpus): CalibrationCase[] {
  const cases: CalibrationCase[] = [];
  const add = (id: string, event: TaskCompleted, r: Reflection, why: string) => {
    cases.push({ id, label: "good", event, reflection: r, why });
  };

  let t = c.trace("web.city-population/wrong-row");
  add(
    "good-city-population-row",
    t.event,
    reflection({
      reflectionText: `The answer 646,665 is Fresno's population, not Tucson's. At step ${t.failingStepIndex} WebSurfer quoted the row "| 34 | Fresno | 646,665 | ..." and attributed it to Tucson, because it took the row next to the one it was looking for in a 50-row table without checking the City cell. The Orchestrator accepted the figure as reported, so the misread went straight into the final answer. The request also asked for rounding to the nearest thousand, which nobody applied, but the root cause is the row mix-up.`,
      strategyText:
        "When reading a value out of a table, match the row by its label before reading any cell, and quote the label back.",
      importance: 0.7,
      confidence: 0.85,
      tags: ["web-browsing", "table-lookup", "misread-row"],
      errorCategory: "misread_source",
      patterns: ["WebSurfer reads the adjacent table row", "table lookup without row label check"],
      adjustments: [
        "add constraint: WebSurfer must quote the row label together with the value and the label must equal the entity named in the question",
        "change the Orchestrator's acceptance check to compare the quoted row label with the requested entity before marking the request satisfied",
        "Apply the rounding the question asks for as the last step, after the value is confirmed",
      ],
      learning:
        "In large tables an off-by-one row read gives a plausible but wrong number; checking the row label is cheap and catches it.",
      attribution: blame(t, "| 34 | Fresno | 646,665", 0.9),
    }),
    "Names the failing actor and step, explains why (adjacent row, no label check), executable fixes.",
  );

  t = c.trace("web.release-date/wrong-row");
  add(
    "good-release-date-row",
    t.event,
    reflection({
      reflectionText: `WebSurfer answered with the date of v2.9.1 instead of v2.9.0. In step ${t.failingStepIndex} it printed the row "| v2.9.1 | 2022-06-13 | ..." and concluded that v2.9.0 was released on 2022-06-13. The releases table lists tags in order with patch releases right after the minor release, and WebSurfer assumed the first row that started with "v2.9" was the one asked for. Nothing downstream compared the tag in the quoted row with the requested tag.`,
      strategyText: "Look releases up by exact tag name rather than by position or prefix.",
      confidence: 0.8,
      tags: ["web-browsing", "github", "release-history"],
      errorCategory: "misread_source",
      patterns: ["prefix match picks the wrong release tag"],
      adjustments: [
        "Open the release by its exact tag URL (/releases/tag/v2.9.0) instead of scanning the list",
        "add constraint: the tag in the quoted row must equal the requested tag character for character",
      ],
      learning:
        "Neighbouring releases (x.y.0, x.y.1, rc tags) have near-identical names; exact matching of the identifier is required.",
      attribution: blame(t, "| v2.9.1 | 2022-06-13", 0.85),
    }),
    "Specific cause (wrong tag row) with the reason it happened and a concrete lookup change.",
  );

  t = c.trace("web.mountain-elevation/guess");
  add(
    "good-mountain-guess",
    t.event,
    reflection({
      reflectionText: `The site search on Wikipedia returned "No results found" for Manaslu, and instead of opening the list article directly the Orchestrator decided at step ${t.failingStepIndex} to "assume the height in metres of Manaslu is about 8,650, in line with comparable entries" and finalize. The failure is a flaw in the Orchestrator's reasoning, not a retrieval failure: the page with the table was one click away, but it assumed a dead-end search proved the figure was unavailable, and a made-up number was reported as fact.`,
      strategyText:
        "A search that returns nothing is a reason to change the route, never a reason to estimate a value the question expects to be looked up.",
      importance: 0.8,
      confidence: 0.85,
      tags: ["web-browsing", "hallucination", "orchestration"],
      errorCategory: "fabricated_answer",
      patterns: [
        "Orchestrator guesses a value after an empty search",
        "no fallback route after No results found",
      ],
      adjustments: [
        "add constraint: the Orchestrator may not mark a lookup request satisfied with an assumed or estimated value",
        "After an empty site search, open the known list page by URL and use the browser's find-in-page for the entity",
        "set max_fallback_routes = 3 before the Orchestrator may report that the fact could not be found",
      ],
      learning:
        "Reporting 'not found' is better than a plausible estimate; an estimate is graded as a wrong answer and hides the retrieval problem.",
      attribution: blame(t, "I will assume the height in metres of Manaslu is about 8,650", 0.9),
    }),
    "Identifies the guessing decision by the Orchestrator, explains the flawed reasoning, concrete guardrails.",
  );

  t = c.trace("code.email-extract/regex-narrow");
  add(
    "good-email-regex",
    t.event,
    reflection({
      reflectionText: `The count is too low because the Coder's regex in step ${t.failingStepIndex}, [a-z]+@[a-z]+\\.com, only matches lower-case local parts without dots, digits or plus signs and only .com domains. The sample printed earlier already showed addresses such as bram+news@..., chen_li@... and domains like mail.example.co.uk and uni-example.de, so the pattern was wrong for this data from the start. The plan asked for a pattern allowing dots, plus signs, subdomains and any TLD; the Coder ignored that and nobody tested the regex on the sample.`,
      strategyText:
        "Test an extraction pattern against the sample lines you printed before running it on the whole file.",
      confidence: 0.85,
      tags: ["coding", "regex", "data-extraction"],
      errorCategory: "incorrect_logic",
      patterns: ["extraction regex narrower than the data", "sample not used to test the pattern"],
      adjustments: [
        "change the pattern to [\\w.+-]+@[\\w-]+(\\.[\\w-]+)+ and lower-case matches before de-duplicating",
        "add constraint: run the regex on the printed sample and confirm every visible address is matched before counting",
      ],
      learning:
        "Quick regexes written from memory miss real-world address formats; validate them against the data you have already seen.",
      attribution: blame(t, "[a-z]+@[a-z]+\\.com", 0.85),
    }),
    "Points at the exact regex, explains why it undercounts using evidence from the trace.",
  );

  t = c.trace("plan.rail-itinerary/arithmetic");
  add(
    "good-rail-arithmetic",
    t.event,
    reflection({
      reflectionText: `The legs and fares were found correctly (EC 90 at €49.00 and IC 3 at €21.60), but the Assistant added them up wrong in step ${t.failingStepIndex}: "€49.00 + €21.60 = €80.60" when the sum is €70.60. This happened because the sum was done in free text by the language model, and the Orchestrator accepted the total without recomputing it.`,
      strategyText: "Do money arithmetic with a tool, not in prose.",
      importance: 0.5,
      confidence: 0.95,
      tags: ["planning", "arithmetic", "travel"],
      errorCategory: "calculation_error",
      patterns: ["LLM adds prices in text and gets the sum wrong"],
      adjustments: [
        "Compute totals with the code executor (sum of the leg fares) and quote the tool output in the answer",
        "add constraint: the Orchestrator re-adds the listed amounts before accepting a total",
      ],
      learning:
        "Even two-term sums go wrong when a model writes them out; a one-line computation removes the risk.",
      attribution: blame(t, "€49.00 + €21.60 = €80.60", 0.95),
    }),
    "Precise, verifiable cause with a tool-based fix.",
  );

  t = c.trace("data.inventory-reorder/file-unreadable");
  add(
    "good-inventory-unreadable",
    t.event,
    reflection({
      reflectionText: `FileSurfer could not convert inventory_leipzig.xlsx (BadZipFile), and at step ${t.failingStepIndex} the Assistant answered anyway: "Warehouses of this size usually have around 68 SKUs below reorder level, so the answer is 68." The number is invented. The answer is wrong because the team had no recovery path for an unreadable workbook: the Coder could have tried pandas.read_excel with openpyxl, or checked whether the file was actually CSV or corrupted, and the Orchestrator invited a best guess instead.`,
      strategyText:
        "If the input file cannot be read, recover or report that; never answer a data question without the data.",
      importance: 0.8,
      confidence: 0.9,
      tags: ["data-analysis", "excel", "hallucination"],
      errorCategory: "fabricated_answer",
      patterns: ["answer fabricated after a file conversion error", "no fallback reader for xlsx"],
      adjustments: [
        'When FileSurfer reports a FileConversionException, have the Coder load the file with pandas.read_excel(engine="openpyxl") and print the sheet names',
        "add constraint: an answer to a data question must cite the output of a step that actually read the file",
        "remove the Orchestrator instruction 'give the best answer you can' for data questions when no data was read",
      ],
      learning:
        "A conversion failure in one tool is usually recoverable with another reader; guessing turns a recoverable error into a wrong answer.",
      attribution: blame(t, "Warehouses of this size usually have around 68 SKUs", 0.9),
    }),
    "Correctly blames the fabricating step (not the tool error), explains why, gives recovery steps.",
  );

  t = c.trace("data.employee-roster/substring-filter");
  add(
    "good-roster-substring",
    t.event,
    reflection({
      reflectionText: `The question asks for employees whose department is exactly Sales, but the Coder filtered with str.contains("Sales") in step ${t.failingStepIndex}. The roster also has a "Sales Operations" department, so those rows were counted too and the result (57) is inflated. The date handling was fine (dayfirst=True); the wrong count is due to a substring match used where an equality test was required.`,
      importance: 0.6,
      confidence: 0.85,
      tags: ["data-analysis", "pandas", "filtering"],
      errorCategory: "incorrect_logic",
      patterns: ["substring filter where exact match was required"],
      adjustments: [
        'change df["department"].str.contains("Sales") to df["department"] == "Sales"',
        'Print df["department"].value_counts() before filtering, so similar category names are visible',
      ],
      learning:
        "Category columns often contain values that share a prefix; 'exactly' in a question means equality, and listing the distinct values first shows the trap.",
      strategyText: "Inspect the distinct values of a categorical column before filtering on it.",
      attribution: blame(t, 'df["department"].str.contains("Sales")', 0.85),
    }),
    "Names the line of code, the affected category, and the fix.",
  );

  t = c.trace("code.json-to-csv/off-by-one");
  add(
    "good-json-off-by-one",
    t.event,
    reflection({
      reflectionText: `The total is short by one order. In step ${t.failingStepIndex} the Coder loops "for i in range(1, len(orders)):  # skip the header record", but orders_q3.json is a JSON array with no header record, so the first order is dropped both from orders.csv and from the sum. The incorrect assumption came from treating JSON like a CSV file; the output was never cross-checked against len(orders).`,
      strategyText: "Check the row count of the output against the input before reporting an aggregate.",
      confidence: 0.85,
      tags: ["coding", "off-by-one", "data-transformation"],
      errorCategory: "incorrect_logic",
      patterns: ["loop skips first record assuming a header", "no row-count check after transformation"],
      adjustments: [
        "change range(1, len(orders)) to iterate over all orders (for o in orders)",
        "add constraint: assert the number of CSV rows written equals len(orders) before summing",
      ],
      learning:
        "Header-skipping is a CSV habit; JSON arrays have none, and a one-line count assertion catches the mismatch.",
      attribution: blame(t, "for i in range(1, len(orders)):  # skip the header record", 0.9),
    }),
    "Exact cause with the incorrect assumption spelled out; a count assertion as the fix.",
  );

  t = c.trace("web.book-pages/skip-verify");
  add(
    "good-book-skip-verify",
    t.event,
    reflection({
      reflectionText: `The plan said to verify the page count on openlibrary.org, but at step ${t.failingStepIndex} the Orchestrator decided the fan blog's figure (223 pages for Hyperion) was enough and that "verification can be skipped" to save steps. The blog was listing a later edition, so the unverified number was wrong. The mistake is the Orchestrator overriding its own verification step because it was inconvenient, after WebSurfer had already landed on a non-authoritative source.`,
      strategyText:
        "Keep verification steps the plan put in, especially when the value came from a secondary source.",
      confidence: 0.8,
      tags: ["web-browsing", "verification", "source-quality"],
      errorCategory: "skipped_verification",
      patterns: [
        "Orchestrator skips planned verification",
        "answer taken from a blog instead of the named source",
      ],
      adjustments: [
        "add constraint: a value from a source other than the one named in the question must be confirmed on the named source before the request is marked satisfied",
        "set the Orchestrator's step budget so that planned verification steps cannot be dropped to save turns",
      ],
      learning:
        "Questions that name a source (Open Library) are graded against that source; secondary pages often describe a different edition.",
      attribution: blame(t, "verification can be skipped", 0.85),
    }),
    "Identifies a planning decision (skipping verification) by the right actor, with the reason.",
  );

  t = c.trace("code.log-5xx/skip-verify");
  add(
    "good-log-skip-verify",
    t.event,
    reflection({
      reflectionText: `The Coder flagged two known gaps — truncated log lines and entries for the day that may be in the rotated file — and asked the Verifier to cross-check with grep. At step ${t.failingStepIndex} the Verifier declined ("a grep cross-check is not needed") and confirmed 73 on plausibility alone. The count missed those lines. The root cause is that the Verifier assumed its role was to review how the code looks rather than to check the result independently, exactly when the author had stated why the result might be off.`,
      strategyText: "A verifier re-derives the number another way; a code review is not verification.",
      confidence: 0.75,
      tags: ["coding", "log-analysis", "verification"],
      errorCategory: "skipped_verification",
      patterns: ["Verifier approves without running the requested check"],
      adjustments: [
        "add constraint: when the Coder lists caveats, the Verifier must run the cross-check it was asked for and report both numbers",
        "Include the rotated log (edge-eu.log.1) in the input glob when the question is about a whole day",
      ],
      learning:
        "Explicit caveats from the author are the highest-value things to verify; skipping them makes the verification step worthless.",
      attribution: blame(t, "a grep cross-check is not needed", 0.8),
    }),
    "Blames the Verifier with the right reasoning, concrete procedural fix.",
  );

  t = c.trace("code.word-count/ignored-traceback");
  add(
    "good-wordcount-traceback",
    t.event,
    reflection({
      reflectionText: `The script crashed with UnicodeDecodeError ('ascii' codec can't decode byte 0xe2) partway through odyssey_book5.txt, after printing a running total of 90. In step ${t.failingStepIndex} the Assistant read that progress line as the result and reported 90, ignoring exitcode 1 and the traceback. The crash was caused by opening the file without encoding="utf-8"; the reporting error is what turned a fixable crash into a wrong answer.`,
      strategyText: "Never report a number from a run that exited with an error.",
      importance: 0.7,
      confidence: 0.9,
      tags: ["coding", "ignored-error", "encoding"],
      errorCategory: "ignored_tool_error",
      patterns: [
        "Assistant reports partial output of a crashed script",
        "file opened without explicit encoding",
      ],
      adjustments: [
        "add constraint: if the terminal reports a non-zero exit code, the Assistant must ask the Coder for a fix instead of answering",
        'set encoding="utf-8" on every open() of a text input',
      ],
      learning: "Progress prints are not results; a traceback in the output means the number is partial.",
      attribution: blame(t, "the last running total printed is 90", 0.9),
    }),
    "Attributes to the Assistant who ignored the traceback (not the terminal) and explains both layers.",
  );

  t = c.trace("web.olympic-medals/stale-snippet");
  add(
    "good-olympics-snippet",
    t.event,
    reflection({
      reflectionText: `WebSurfer answered from a search snippet instead of the official medal table. At step ${t.failingStepIndex} it used a fan blog snippet dated 2017 — four years before the Tokyo Games took place — and stated it did not open the page because the snippet gave the figure. A 2017 page cannot report Tokyo 2020 results, so the snippet was about earlier Games. Two checks were skipped: the date of the source versus the event, and the source named in the question (Olympics.com).`,
      confidence: 0.85,
      tags: ["web-browsing", "search-snippet", "stale-source"],
      errorCategory: "stale_source",
      patterns: ["answer taken from a search snippet", "source older than the event asked about"],
      adjustments: [
        "add constraint: a figure must come from an opened page, not a search-result snippet",
        "Reject any source whose publication date is before the event in the question",
        "Go to the source named in the question (olympics.com medal table) first",
      ],
      learning:
        "Snippets are summaries of unknown date and scope; for results of a dated event the source must postdate it.",
      strategyText:
        "Open the authoritative page named in the question; use snippets only to choose which page to open.",
      attribution: blame(t, "(15 August 2017)", 0.85),
    }),
    "Specific, causal, uses the date evidence; adjustments are executable.",
  );

  t = c.trace("web.laptop-price/currency");
  add(
    "good-laptop-currency",
    t.event,
    reflection({
      reflectionText: `The Assistant subtracted a GBP price from a EUR price as if they were the same currency: "1349.00 − 1149.00 = 200.00, so laptopworld.co.uk is cheaper by $200.00" (step ${t.failingStepIndex}). WebSurfer had fetched the exchange rates (1 EUR = 1.08 USD, 1 GBP = 1.27 USD) just before, but they were never applied. Converted, €1,349 is $1,456.92 and £1,149 is $1,459.23, so the UK shop is actually slightly more expensive; both the direction and the amount were wrong.`,
      strategyText: "Convert every amount to the target currency before comparing.",
      importance: 0.7,
      confidence: 0.9,
      tags: ["web-browsing", "currency", "price-comparison"],
      errorCategory: "unit_error",
      patterns: ["amounts in different currencies compared directly"],
      adjustments: [
        "add constraint: every price carries its currency code and prices are compared only after conversion to USD",
        "Compute the conversion with the code executor using the looked-up rates and show both converted prices",
      ],
      learning:
        "Dropping currency symbols turns a price comparison into nonsense; keep units attached until the final subtraction.",
      attribution: blame(t, "1349.00 − 1149.00 = 200.00", 0.9),
    }),
    "Exact arithmetic evidence, correct recomputation, and an enforceable constraint.",
  );

  t = c.trace("data.sales-workbook/first-sheet-only");
  add(
    "good-sales-first-sheet",
    t.event,
    reflection({
      reflectionText: `FileSurfer's converted view starts with "## Sheet: 2022 (sheet 1 of 3)", but at step ${t.failingStepIndex} FileSurfer said "The workbook has one table" and summed Q3 Actual for South from that sheet. The question is about 2023, which is on another sheet, so the figure is last year's. FileSurfer overlooked the sheet header, and because it did the summing itself the Coder never loaded the workbook with sheet_name="2023".`,
      confidence: 0.85,
      tags: ["data-analysis", "excel", "multi-sheet"],
      errorCategory: "misread_source",
      patterns: ["only the first sheet of a workbook is read"],
      adjustments: [
        "Have the Coder list sheet names with pd.ExcelFile(path).sheet_names before any computation",
        'change the computation to pd.read_excel("sales_2023.xlsx", sheet_name="2023")',
        "add constraint: FileSurfer reports structure only; sums are computed by code",
      ],
      learning:
        "Converted spreadsheet views show one sheet at a time; 'sheet 1 of 3' means most of the data is elsewhere.",
      strategyText: "Establish the workbook's structure (sheets, headers) before computing anything.",
      attribution: blame(t, "The workbook has one table", 0.85),
    }),
    "Specific evidence (sheet 1 of 3 vs 'one table'), correct actor, executable fixes.",
  );

  t = c.trace("code.pagination-fix/modified-test");
  add(
    "good-pagination-test-edit",
    t.event,
    reflection({
      reflectionText: `The task was to fix pyclient/client.py so fetch_all() returns all 100 items. Instead, at step ${t.failingStepIndex} the Coder decided the fixture was "inconsistent" and changed the test's expected value from 100 to 90, which made the suite pass while leaving the bug (range(2, pages) drops the last page) in place. The reported 90 is the buggy behaviour. The Coder's approach optimised for a green test rather than for the stated requirement.`,
      strategyText: "Treat the failing test as the specification unless the task says the test is wrong.",
      importance: 0.8,
      confidence: 0.9,
      tags: ["coding", "test-tampering", "pagination"],
      errorCategory: "incorrect_fix",
      patterns: ["Coder edits the test expectation instead of the code"],
      adjustments: [
        "add constraint: files under tests/ are read-only for bug-fix tasks",
        "change the loop to range(2, pages + 1) and keep yielding the first page's items",
      ],
      learning:
        "A passing test after editing the assertion proves nothing; the fix must change the code under test.",
      attribution: blame(t, "I'll align the test with the current behaviour", 0.9),
    }),
    "Names the wrong strategy (edit the test) and the actual bug; enforceable constraint.",
  );

  t = c.trace("plan.meeting-timezones/timezone-ignored");
  add(
    "good-meeting-timezones",
    t.event,
    reflection({
      reflectionText: `At step ${t.failingStepIndex} the Assistant treated "09:00–18:00 local" as the same interval for San Francisco, London and Bangalore and proposed 09:00 UTC, which is 02:00 in San Francisco and 14:30 in Bangalore. WebSurfer had retrieved the UTC offsets but the Assistant never converted the working hours to UTC before intersecting them. The reasoning skipped the one step that the question depends on.`,
      strategyText: "Convert every participant's constraints to a single time zone before intersecting them.",
      confidence: 0.9,
      tags: ["planning", "time-zones", "scheduling"],
      errorCategory: "incorrect_logic",
      patterns: ["local working hours intersected without time-zone conversion"],
      adjustments: [
        "Convert each city's 09:00–18:00 to UTC with zoneinfo for the meeting date and intersect the UTC intervals",
        "add constraint: the proposed slot must be shown in each attendee's local time and fall inside 09:00–18:00 for all of them",
      ],
      learning:
        "'Working hours' are local; the overlap across zones can be short or empty, and it only shows up after conversion.",
      attribution: blame(t, "the common window is simply 09:00–18:00", 0.9),
    }),
    "Clear causal analysis with verifiable numbers and a concrete procedure.",
  );

  t = c.trace("web.press-release-date/date-format");
  add(
    "good-press-date-format",
    t.event,
    reflection({
      reflectionText: `The archive is a UK government site and states that dates are shown as DD/MM/YYYY, but at step ${t.failingStepIndex} WebSurfer read "02/08/2019" as February 8 and answered 2019-02-08. The correct reading is 2 August 2019 (2019-08-02). WebSurfer assumed the US month/day convention and ignored the note on the page.`,
      confidence: 0.85,
      tags: ["web-browsing", "date-format", "localisation"],
      errorCategory: "format_error",
      patterns: ["DD/MM date read as MM/DD"],
      adjustments: [
        "add constraint: before converting a numeric date, WebSurfer states which convention the page uses and quotes where it says so",
        "Parse dates with an explicit format string (%d/%m/%Y for gov.uk) in code rather than by reading them",
      ],
      learning: "Numeric dates with both parts ≤ 12 are ambiguous; the site's locale decides the reading.",
      strategyText: "Resolve the date convention from the source before reformatting a date.",
      attribution: blame(t, "The date 02/08/2019 means February 8, 2019", 0.9),
    }),
    "Specific misreading, evidence on the page, executable parsing fix.",
  );

  t = c.trace("data.survey-mean/fillna-zero");
  add(
    "good-survey-fillna",
    t.event,
    reflection({
      reflectionText: `The question says to exclude blank answers, but in step ${t.failingStepIndex} the Coder wrote .fillna(0), turning every blank satisfaction score into a 0 on a 1–5 scale. That pulls the mean for Kenya down, which is why 3.34 is below the true value. This was an incorrect assumption about how missing data should be treated, directly contradicting the instruction.`,
      confidence: 0.85,
      tags: ["data-analysis", "missing-values", "pandas"],
      errorCategory: "incorrect_logic",
      patterns: ["missing values filled with zero before averaging"],
      adjustments: [
        "change .fillna(0) to .dropna() before computing the mean",
        "Print the number of blank answers dropped alongside the mean",
      ],
      learning:
        "Zero is a value, not an absence; on a 1–5 scale it is impossible and biases the average down.",
      strategyText:
        "Follow the question's rule for missing data explicitly and report how many rows it affected.",
      attribution: blame(t, ".fillna(0)", 0.9),
    }),
    "Pinpoints the line and the violated instruction; simple, correct fix.",
  );

  t = c.trace("code.scheduler-tz/wrong-file");
  add(
    "good-scheduler-wrong-file",
    t.event,
    reflection({
      reflectionText: `The failing test's traceback points to scheduler/core.py line 41, but at step ${t.failingStepIndex} the Coder patched scheduler/legacy.py, which the test does not import. The subsequent run therefore still used the buggy offset computation and printed the same wrong time (14:00Z instead of 13:00Z), which the Assistant reported as the fixed result. The Coder assumed both modules shared the implementation and did not re-run the failing test after patching.`,
      confidence: 0.85,
      tags: ["coding", "debugging", "wrong-file"],
      errorCategory: "incorrect_fix",
      patterns: [
        "patch applied to a file the failing code path does not use",
        "fix not verified by re-running the failing test",
      ],
      adjustments: [
        "add constraint: the patched file must appear in the traceback of the failing test",
        "Re-run tests/test_core.py::test_next_run_dst after every patch and report its status",
      ],
      learning:
        "Duplicate implementations are common in older code bases; the traceback, not the function name, says which one runs.",
      strategyText: "Patch where the traceback points, then prove the fix with the test that failed.",
      attribution: blame(t, "--- a/scheduler/legacy.py", 0.85),
    }),
    "Cause tied to the traceback evidence; fixes are checkable.",
  );

  t = c.trace("plan.flight-search/constraint-dropped");
  add(
    "good-flight-nonstop",
    t.event,
    reflection({
      reflectionText: `The results page listed "LH 1173 / LH 470 via FRA — 1 stop — €489" first because it was sorted by price, and at step ${t.failingStepIndex} WebSurfer reported it as "the cheapest flight". The question required a nonstop flight; the nonstop TP 259 at €612 was right below it. WebSurfer dropped the nonstop constraint when it searched without the filter and again when it read the list.`,
      strategyText: "Apply every hard constraint as a search filter, then re-check it on the chosen result.",
      confidence: 0.9,
      tags: ["planning", "flights", "constraints"],
      errorCategory: "constraint_violation",
      patterns: ["cheapest result chosen while a hard constraint is ignored"],
      adjustments: [
        "set the search filter stops = 0 (nonstop) before sorting by price",
        "add constraint: the reported flight's stop count must be quoted and equal 0",
      ],
      learning:
        "Sorting by price surfaces the option that violates constraints first; filters must be applied before the sort.",
      attribution: blame(t, "The cheapest flight is LH 1173 / LH 470 via FRA", 0.9),
    }),
    "Names the violated constraint, the step and the exact fix.",
  );

  t = c.trace("web.arxiv-count/early-stop");
  add(
    "good-arxiv-early-stop",
    t.event,
    reflection({
      reflectionText: `WebSurfer correctly reported "On this page I count 4 papers", and the listing said it showed only the first page of results. At step ${t.failingStepIndex} the Orchestrator nonetheless marked the request satisfied with 4 because it took the per-page count for the total. The plan explicitly said to go through every page and add the counts; the Orchestrator terminated early.`,
      confidence: 0.85,
      tags: ["web-browsing", "pagination", "counting", "orchestration"],
      errorCategory: "premature_termination",
      patterns: ["Orchestrator stops after the first page of a paginated list"],
      adjustments: [
        "add constraint: a count over a listing is final only when the last page (no 'Next') has been visited",
        "Request the listing with the largest page size the site allows (e.g. size=200) to reduce pages",
      ],
      learning: "'Showing 1–25 of N' is the signal that a count is partial.",
      strategyText: "Keep a running total per page and stop only at the last page.",
      attribution: blame(t, "WebSurfer has counted the papers", 0.85),
    }),
    "Correctly attributes to the Orchestrator's termination decision, not to WebSurfer.",
  );

  t = c.trace("data.energy-usage/wrong-unit");
  add(
    "good-energy-units",
    t.event,
    reflection({
      reflectionText: `The readings are in Wh, and the script in step ${t.failingStepIndex} summed the wh column and printed it without dividing by 1000, so 465,852 Wh was reported as 465,852 kWh. The Coder handled the time zone correctly (tz_convert to Europe/Amsterdam) but overlooked the unit conversion the question spelled out.`,
      importance: 0.6,
      confidence: 0.95,
      tags: ["data-analysis", "units"],
      errorCategory: "unit_error",
      patterns: ["Wh reported as kWh"],
      adjustments: [
        "change the final line to print(round(total_wh / 1000, 1))",
        "Name variables with their unit (total_wh, total_kwh) so a missing conversion is visible",
      ],
      learning:
        "A result three orders of magnitude off for a household's monthly use (~300–600 kWh) is a unit error; sanity-check magnitudes.",
      strategyText: "Carry units in variable names and sanity-check the magnitude of the result.",
      attribution: blame(t, 'print(df.loc[local.dt.month_name() == "March", "wh"].sum())', 0.9),
    }),
    "Exact unit error with the offending line; simple executable fixes.",
  );

  t = c.trace("web.company-revenue/wrong-page");
  add(
    "good-revenue-wrong-year",
    t.event,
    reflection({
      reflectionText: `The question asks for fiscal 2022, and the search results listed both the FY2022 and FY2021 10-K pages. At step ${t.failingStepIndex} WebSurfer read Corrigan Freight's revenue from "Form 10-K fiscal year 2021 - selected financial data" and reported it as the fiscal 2022 figure. The page title states the year; the mix-up happened because WebSurfer opened the second result and did not compare the fiscal year on the page with the one requested.`,
      confidence: 0.85,
      tags: ["web-browsing", "financial-data", "wrong-document"],
      errorCategory: "misread_source",
      patterns: ["value read from the wrong year's report"],
      adjustments: [
        "add constraint: WebSurfer states the fiscal year printed on the page and it must match the year in the question",
        "Open the filing from the EDGAR index filtered by fiscal year (FY2022) rather than from search results",
      ],
      learning:
        "Annual reports of consecutive years have the same layout; the year in the title is the only thing that distinguishes them.",
      strategyText: "Check the document's period before reading any figure from it.",
      attribution: blame(t, 'According to "Form 10-K fiscal year 2021 - selected financial data"', 0.85),
    }),
    "Wrong-document cause with the evidence from the title; concrete checks.",
  );

  t = c.trace("plan.conference-hotel/nights-off-by-one");
  add(
    "good-hotel-nights",
    t.event,
    reflection({
      reflectionText: `Hotel choice was right (Motel One Wien-Prater, €119/night, within 1 km, free cancellation), but at step ${t.failingStepIndex} the Assistant counted "2024-05-13 to 2024-05-16 inclusive is 4 nights" and charged €476. A stay from the 13th to the 16th is three nights (€357): the checkout day is not a night. The error is due to counting calendar days instead of nights.`,
      importance: 0.5,
      confidence: 0.95,
      tags: ["planning", "hotel", "date-arithmetic"],
      errorCategory: "calculation_error",
      patterns: ["nights counted including the checkout day"],
      adjustments: [
        "set nights = (check_out - check_in).days and compute the total as nights × rate with code",
      ],
      learning: "Hotel nights are the difference of the dates, not the count of dates in the range.",
      strategyText: "Use date subtraction for durations; do not count days by hand.",
      attribution: blame(t, "inclusive is 4 nights", 0.95),
    }),
    "Short but complete; one precise adjustment is enough here.",
  );

  // Classic single-agent failures from the examples.
  const sql = exampleEvent("01");
  add(
    "good-sql-timeout",
    sql,
    reflection({
      reflectionText:
        "The query joined orders, order_line_items, shipments and customers for the whole history of cus_48213 with no LIMIT and no date bound, and Postgres cancelled it after 30 s (SQLSTATE 57014) with a planner estimate of about 4.8 million rows. The plan chose one unpaginated query because the full history was needed, an incorrect assumption: the history can be fetched in pages. The filter on customers.external_id also forces the join before the customer is resolved.",
      strategyText: "Resolve the customer id first, then page through the history with keyset pagination.",
      importance: 0.7,
      confidence: 0.8,
      tags: ["postgres", "timeout", "query-design"],
      errorCategory: "timeout_error",
      patterns: ["unbounded multi-join query times out"],
      adjustments: [
        "Look up customers.id for external_id 'cus_48213' in a separate query and filter orders by customer_id",
        "add constraint: history queries use keyset pagination (WHERE o.created_at < $cursor ORDER BY o.created_at DESC LIMIT 500)",
        "set statement_timeout = 30s per page and fetch pages until none are returned",
      ],
      learning:
        "'Need all rows' does not mean 'in one query'; paging keeps each statement under the timeout.",
      attribution: blameStep(sql, 1, "no pagination", 0.75),
    }),
    "Classic single-agent failure: specific cause, concrete SQL-level fixes.",
  );

  const rate = exampleEvent("02");
  add(
    "good-github-429",
    rate,
    reflection({
      reflectionText:
        "The repository search already showed X-RateLimit-Remaining: 0, and the agent still issued the code search, got HTTP 429 with Retry-After: 20, and retried immediately instead of waiting, getting a second 429. It then aborted the survey. The failure is in the retry approach: it ignored both the remaining-quota header and Retry-After.",
      strategyText:
        "Respect rate-limit headers: wait for Retry-After, and budget searches by the remaining quota.",
      importance: 0.6,
      confidence: 0.85,
      tags: ["github", "rate-limit", "retry"],
      errorCategory: "rate_limit_error",
      patterns: ["retry without honouring Retry-After"],
      adjustments: [
        "set the retry delay = Retry-After seconds (20 s here), with at most 3 attempts",
        "add constraint: do not send a search request when X-RateLimit-Remaining is 0; wait until X-RateLimit-Reset",
      ],
      learning:
        "GitHub's code search has its own small quota (10/min); pacing requests is cheaper than failing the task.",
      attribution: blameStep(rate, 5, "search/code?q=eachBatch", 0.75),
    }),
    "Classic 429 case with header-level evidence and backoff parameters.",
  );

  const auth = exampleEvent("03");
  add(
    "good-salesforce-401",
    auth,
    reflection({
      reflectionText:
        "The Salesforce access token had expired (issued at 21:40 with a 2-hour TTL) and the first query returned 401 invalid_grant. The agent retried the same request with the same token instead of refreshing it, got the same 401, and returned an empty pipeline table. Nothing in the approach handled token expiry, so a routine condition ended the task.",
      strategyText: "On 401 invalid_grant / expired token, refresh the OAuth token once and retry.",
      importance: 0.7,
      confidence: 0.85,
      tags: ["salesforce", "oauth", "auth"],
      errorCategory: "auth_error",
      patterns: ["retry with an expired token"],
      adjustments: [
        "On a 401 with error invalid_grant, call the OAuth refresh-token flow and retry the query once with the new token",
        "add constraint: never retry a 401 with the same token",
      ],
      learning: "Expired tokens are expected in long sessions; refresh is the fix, retrying is not.",
      attribution: blameStep(auth, 3, "GET /services/data/v61.0/query", 0.8),
    }),
    "Classic auth failure: cause, the wrong retry, the right refresh step.",
  );

  const cal = exampleEvent("04");
  add(
    "good-calendar-400",
    cal,
    reflection({
      reflectionText:
        "The calendar tool requires an RFC 3339 start time, but the agent passed the user's phrase \"next Tuesday 3pm\" unchanged, got 400 validation_failed on the start field, and retried with the same value. The root cause is that relative date expressions were never resolved against the current date and the user's time zone before the tool call.",
      strategyText:
        "Resolve relative dates to absolute timestamps in the user's time zone before calling a tool.",
      importance: 0.5,
      confidence: 0.9,
      tags: ["calendar", "validation", "date-parsing"],
      errorCategory: "validation_error",
      patterns: ["natural-language date passed to a typed API field"],
      adjustments: [
        'change start to "2025-06-17T15:00:00+02:00" (next Tuesday 15:00 Europe/Berlin) before calling calendar_create_event',
        "add constraint: after a 400 naming a field, fix that field before retrying",
      ],
      learning:
        "Typed tool arguments need normalised values; the 400 response even names the expected format.",
      attribution: blameStep(cal, 2, "next Tuesday 3pm", 0.85),
    }),
    "Classic schema-validation case with the exact corrected argument.",
  );

  return cases;
}

function duplicateCases(c: Corpus): CalibrationCase[] {
  const cases: CalibrationCase[] = [];
  const add = (id: string, of: string, t: CorpusTrace, r: Reflection) => {
    cases.push({
      id,
      label: "duplicate",
      event: t.event,
      reflection: r,
      duplicateOf: of,
      why: `Same cause as ${of} (${t.causeId}) on a reworded task; the lesson is the same, only the entities and wording differ.`,
    });
  };

  let t = c.trace("web.city-population/wrong-row", 1);
  add(
    "dup-city-population-row",
    "good-city-population-row",
    t,
    reflection({
      reflectionText: `WebSurfer reported 365,386 for Wichita, but the row it quoted at step ${t.failingStepIndex} is Arlington's ("| 50 | Arlington | 365,386 | ..."). It read the line below the target in the census table and never checked the city name, and the Orchestrator took the number as given.`,
      strategyText: "Identify the table row by its label first, then read the value.",
      confidence: 0.85,
      tags: ["web-browsing", "table-lookup"],
      errorCategory: "misread_source",
      patterns: ["adjacent row read in a table lookup"],
      adjustments: [
        "add constraint: the quoted row's City cell must match the city in the question",
        "change the Orchestrator's acceptance rule to reject values whose quoted row names another entity",
      ],
      learning: "Off-by-one row reads produce believable numbers; a label check catches them.",
      attribution: blame(t, "| 50 | Arlington | 365,386", 0.9),
    }),
  );

  t = c.trace("web.release-date/wrong-row", 1);
  add(
    "dup-release-date-row",
    "good-release-date-row",
    t,
    reflection({
      reflectionText: `Asked for v2.12.0, WebSurfer quoted the v2.12.1 row and returned its date (step ${t.failingStepIndex}). Patch releases sit next to the minor release in the list, and the tag in the quoted row was not compared with the tag requested.`,
      confidence: 0.8,
      tags: ["web-browsing", "github"],
      errorCategory: "misread_source",
      patterns: ["neighbouring release tag read instead of the requested one"],
      adjustments: [
        "Open /releases/tag/v2.12.0 directly",
        "add constraint: quoted tag must equal the requested tag exactly",
      ],
      learning: "Release lists are dense with similar names; exact identifier matching is needed.",
      strategyText: "Address releases by exact tag.",
      attribution: blame(t, "| v2.12.1 | 2023-02-02", 0.85),
    }),
  );

  t = c.trace("web.mountain-elevation/guess", 1);
  add(
    "dup-mountain-guess",
    "good-mountain-guess",
    t,
    reflection({
      reflectionText: `After the site search found nothing for Annapurna I, the Orchestrator filled the gap with an estimate ("I will assume ... about 8,450") and finalized at step ${t.failingStepIndex}. The list article with the exact height was reachable directly; the empty search was treated as the end of the road instead of a cue to change route.`,
      strategyText: "Empty search results call for another route, not an estimate.",
      importance: 0.8,
      confidence: 0.85,
      tags: ["web-browsing", "hallucination"],
      errorCategory: "fabricated_answer",
      patterns: ["estimate reported after a search with no results"],
      adjustments: [
        "add constraint: lookup answers cannot be estimated values",
        "Open the list page by URL and search within the page when site search is empty",
      ],
      learning: "A made-up figure is worse than admitting the lookup failed.",
      attribution: blame(t, "I will assume the height in metres of Annapurna I is about 8,450", 0.9),
    }),
  );

  t = c.trace("code.email-extract/regex-narrow", 1);
  add(
    "dup-email-regex",
    "good-email-regex",
    t,
    reflection({
      reflectionText: `Only 36 addresses were found in event_attendees.txt because the pattern used at step ${t.failingStepIndex}, [a-z]+@[a-z]+\\.com, rejects dots, digits and plus signs in the local part and every non-.com domain. The printed sample contained exactly such addresses, and the regex was never tried on it.`,
      confidence: 0.85,
      tags: ["coding", "regex"],
      errorCategory: "incorrect_logic",
      patterns: ["over-narrow e-mail regex"],
      adjustments: [
        "change the regex to [\\w.+-]+@[\\w-]+(\\.[\\w-]+)+ and lower-case before the set()",
        "Check the pattern against the sample lines before counting the whole file",
      ],
      learning: "Validate an extraction pattern on data you have already looked at.",
      strategyText: "Test patterns on the sample first.",
      attribution: blame(t, "[a-z]+@[a-z]+\\.com", 0.85),
    }),
  );

  t = c.trace("plan.rail-itinerary/arithmetic", 1);
  add(
    "dup-rail-arithmetic",
    "good-rail-arithmetic",
    t,
    reflection({
      reflectionText: `The Vienna–Venice legs were priced correctly at €34.90 and €29.90, yet the Assistant wrote "€34.90 + €29.90 = €74.80" (step ${t.failingStepIndex}); the sum is €64.80. The addition was done in the text of the reply and nobody recomputed it.`,
      confidence: 0.95,
      tags: ["planning", "arithmetic"],
      errorCategory: "calculation_error",
      patterns: ["price total added up wrongly in prose"],
      adjustments: [
        "Sum fares with the code executor and paste its output",
        "add constraint: totals are re-added before the answer is accepted",
      ],
      learning: "Let a tool do the sums, however small.",
      strategyText: "Arithmetic goes through a tool.",
      attribution: blame(t, "€34.90 + €29.90 = €74.80", 0.95),
    }),
  );

  t = c.trace("data.inventory-reorder/file-unreadable", 1);
  add(
    "dup-inventory-unreadable",
    "good-inventory-unreadable",
    t,
    reflection({
      reflectionText: `inventory_gdansk.xlsx failed to convert, and the Assistant produced "around 61 SKUs" from general expectations about warehouses (step ${t.failingStepIndex}). No step ever read the data. Instead of trying another reader (pandas with openpyxl) the team accepted a fabricated count.`,
      strategyText: "No data read, no answer: recover the file or report the failure.",
      importance: 0.8,
      confidence: 0.9,
      tags: ["data-analysis", "hallucination"],
      errorCategory: "fabricated_answer",
      patterns: ["fabricated answer after the file could not be opened"],
      adjustments: [
        'On FileConversionException, load the workbook with pandas.read_excel(engine="openpyxl")',
        "add constraint: data answers must cite output from a step that read the file",
      ],
      learning:
        "Conversion errors are usually recoverable with a second reader; guessing is never acceptable for a data question.",
      attribution: blame(t, "Warehouses of this size usually have around 61 SKUs", 0.9),
    }),
  );

  t = c.trace("data.employee-roster/substring-filter", 1);
  add(
    "dup-roster-substring",
    "good-roster-substring",
    t,
    reflection({
      reflectionText: `"Exactly Marketing" was implemented as str.contains("Marketing") in step ${t.failingStepIndex}, so employees of the "Marketing Operations" department were counted as well, inflating the result to 48.`,
      confidence: 0.85,
      tags: ["data-analysis", "filtering"],
      errorCategory: "incorrect_logic",
      patterns: ["contains() used for an exact category match"],
      adjustments: [
        'change the filter to df["department"] == "Marketing"',
        "List the distinct department values before filtering",
      ],
      learning: "Prefix-sharing categories make substring filters overcount.",
      strategyText: "Use equality for exact-category questions.",
      attribution: blame(t, 'str.contains("Marketing")', 0.85),
    }),
  );

  t = c.trace("code.json-to-csv/off-by-one", 1);
  add(
    "dup-json-off-by-one",
    "good-json-off-by-one",
    t,
    reflection({
      reflectionText: `In step ${t.failingStepIndex} the conversion loop starts at index 1 "to skip the header record", but orders_2023-09.json has no header: the first delivered order is lost from both the CSV and the sum. The Coder carried a CSV assumption over to JSON input and did not compare row counts.`,
      confidence: 0.85,
      tags: ["coding", "off-by-one"],
      errorCategory: "incorrect_logic",
      patterns: ["first record skipped as if it were a header"],
      adjustments: [
        "Iterate over every element of the JSON array",
        "add constraint: rows written == len(orders) before aggregating",
      ],
      learning: "JSON arrays have no header row; count checks expose skipped records.",
      strategyText: "Verify counts after every transformation.",
      attribution: blame(t, "# skip the header record", 0.9),
    }),
  );

  t = c.trace("web.book-pages/skip-verify", 1);
  add(
    "dup-book-skip-verify",
    "good-book-skip-verify",
    t,
    reflection({
      reflectionText: `For "Kindred" the team again took the page count (405) from a reader's blog, and at step ${t.failingStepIndex} the Orchestrator judged that checking Open Library "would take several more steps" and skipped it. The blog described a different edition; the planned verification against the named source would have caught that.`,
      confidence: 0.8,
      tags: ["web-browsing", "verification"],
      errorCategory: "skipped_verification",
      patterns: ["planned verification skipped for a secondary-source value"],
      adjustments: [
        "add constraint: values from a source other than the one named in the question are confirmed on the named source",
        "Do not let the step budget remove verification steps from the plan",
      ],
      learning:
        "Secondary sources often describe other editions; the named source is what the answer is graded against.",
      strategyText: "Verification steps in the plan are not optional.",
      attribution: blame(t, "verification can be skipped", 0.85),
    }),
  );

  t = c.trace("code.log-5xx/skip-verify", 1);
  add(
    "dup-log-skip-verify",
    "good-log-skip-verify",
    t,
    reflection({
      reflectionText: `The Coder warned that truncated lines and the rotated log could affect the count for 09/Sep/2023 and asked for a grep cross-check; the Verifier answered that the cross-check was "not needed" and confirmed 138 (step ${t.failingStepIndex}). An approval based on how the script looks is not verification, and the caveats it ignored are exactly where the count went wrong.`,
      confidence: 0.75,
      tags: ["coding", "verification"],
      errorCategory: "skipped_verification",
      patterns: ["Verifier skips the requested cross-check"],
      adjustments: [
        "add constraint: the Verifier runs every check the author requests and reports both results",
        "Include rotated log files when counting a full day",
      ],
      learning: "Author caveats are the first thing a verifier must test.",
      strategyText: "Verify by independent recomputation.",
      attribution: blame(t, "a grep cross-check is not needed", 0.8),
    }),
  );

  return cases;
}

function vagueCases(c: Corpus, big: CorpusTrace): CalibrationCase[] {
  const cases: CalibrationCase[] = [];
  const add = (id: string, event: TaskCompleted, r: Reflection, why: string) => {
    cases.push({ id, label: "vague", event, reflection: r, why });
  };

  add(
    "vague-olympics-row",
    c.trace("web.olympic-medals/wrong-row").event,
    reflection({
      reflectionText:
        "The agent returned an incorrect number of gold medals. The team should have been more careful when reading the medal table and should verify results before giving a final answer. Better attention to detail would have avoided this.",
      strategyText: "Be more careful with data from websites.",
      confidence: 0.6,
      tags: ["web"],
      patterns: ["careless reading"],
      adjustments: [
        "Improve the accuracy of web lookups",
        "Pay attention to details in tables",
        "Double-check the answer",
      ],
      learning: "Accuracy matters when answering factual questions.",
    }),
    "No cause beyond 'be careful'; adjustments are not executable.",
  );

  add(
    "vague-mountain-row",
    c.trace("web.mountain-elevation/wrong-row").event,
    reflection({
      reflectionText:
        "The final answer for the height of Makalu was wrong. This happened because the agents did not verify the information thoroughly enough. In future the agents should improve their verification process and make sure the answer is correct.",
      strategyText: "Improve verification.",
      confidence: 0.55,
      tags: ["web", "verification"],
      patterns: ["insufficient verification"],
      adjustments: ["Improve the verification step", "Try harder to find reliable sources"],
      learning: "Always verify information before answering.",
    }),
    "Uses causal words but names no concrete cause; fixes are generic.",
  );

  add(
    "vague-wordcount-substring",
    c.trace("code.word-count/substring").event,
    reflection({
      reflectionText:
        "The script produced an incorrect count of the word. The Coder should write more robust code and test it better. The Assistant should also review the output more critically.",
      confidence: 0.5,
      tags: ["coding"],
      patterns: ["code quality issues"],
      adjustments: ["Write better code", "Test the script more", "Review outputs critically"],
      learning: "Code should be tested before its output is trusted.",
    }),
    "Doesn't identify the substring-count bug; adjustments are platitudes.",
  );

  add(
    "vague-sales-unreadable",
    c.trace("data.sales-workbook/file-unreadable").event,
    reflection({
      reflectionText:
        "There was a problem with the spreadsheet and the answer was not correct. The team needs to handle files better and be more careful about the answers it gives.",
      strategyText: "Handle files better.",
      confidence: 0.5,
      tags: ["data"],
      patterns: ["file handling problems"],
      adjustments: ["Improve file handling", "Be more careful with answers"],
      learning: "File problems can lead to wrong answers.",
    }),
    "Mentions 'a problem' but not the fabricated value; no executable change.",
  );

  add(
    "vague-museum-hours",
    c.trace("plan.museum-day/assumed-availability").event,
    reflection({
      reflectionText:
        "The plan included a museum that could not be visited. The agents should do better research on opening hours and pay more attention to the user's constraints in the future.",
      confidence: 0.55,
      tags: ["planning", "travel"],
      patterns: ["incomplete research"],
      adjustments: ["Do better research", "Pay attention to user constraints", "Make the plan more reliable"],
      learning: "Good planning requires good research.",
    }),
    "Symptom only (no mention of the assumption made when hours were missing); vague adjustments.",
  );

  add(
    "vague-michelin-count",
    c.trace("web.michelin-count/early-stop").event,
    reflection({
      reflectionText:
        "The count of restaurants was wrong. The orchestration could be improved so that the team is more thorough. More effort should go into making sure all the data is considered.",
      strategyText: "Be thorough.",
      confidence: 0.6,
      tags: ["web", "counting"],
      patterns: ["lack of thoroughness"],
      adjustments: ["Improve orchestration", "Be more thorough when counting"],
      learning: "Thoroughness is important for counting tasks.",
    }),
    "Gestures at thoroughness but never names the first-page-only count; no concrete step.",
  );

  add(
    "vague-isbn-exception",
    c.trace("code.isbn-validate/swallowed-exception").event,
    reflection({
      reflectionText:
        "The number of valid ISBNs reported was incorrect. The validation logic had issues. The team should improve the validation function and make sure edge cases are handled.",
      confidence: 0.55,
      tags: ["coding", "validation"],
      patterns: ["edge cases not handled"],
      adjustments: ["Improve the validation function", "Handle edge cases", "Test more thoroughly"],
      learning: "Edge cases matter in validation code.",
    }),
    "'Edge cases' without saying which (the X check digit swallowed by except ValueError).",
  );

  add(
    "vague-flight-delays",
    c.trace("data.flight-delays/wrong-unit").event,
    reflection({
      reflectionText:
        "The median delay given was not right. It seems something went wrong in the computation. Next time the agents should check their calculations more carefully and make sure the result makes sense.",
      strategyText: "Check calculations.",
      confidence: 0.5,
      tags: ["data-analysis"],
      patterns: ["calculation mistakes"],
      adjustments: ["Check calculations carefully", "Make sure results make sense"],
      learning: "Results should be sanity-checked.",
    }),
    "'Something went wrong' — the seconds/minutes mix-up is never identified.",
  );

  add(
    "vague-flight-stale",
    c.trace("plan.flight-search/stale-price").event,
    reflection({
      reflectionText:
        "The fare reported did not match the current price. The team should use better sources and try harder to get up-to-date information.",
      confidence: 0.55,
      tags: ["planning", "flights"],
      patterns: ["outdated information"],
      adjustments: ["Use better sources", "Try harder to get current data"],
      learning: "Up-to-date information is important.",
    }),
    "Close to the symptom but no cause (fare alert used instead of a live search) and no executable fix.",
  );

  add(
    "vague-exhibition-guess",
    c.trace("web.exhibition-date/guess").event,
    reflection({
      reflectionText:
        "The agent could not find the opening date and the final answer was incorrect. The search strategy needs to be improved so that information can be found more reliably.",
      strategyText: "Improve the search strategy.",
      confidence: 0.5,
      tags: ["web", "search"],
      patterns: ["search failures"],
      adjustments: ["Improve the search strategy", "Search more effectively"],
      learning: "Better searching leads to better answers.",
    }),
    "Blames 'search' generally; does not say an invented date was reported.",
  );

  const rate = exampleEvent("02");
  add(
    "vague-github-429",
    rate,
    reflection({
      reflectionText:
        "The task failed because of an API error. The agent should handle errors better and be more resilient in the future.",
      confidence: 0.5,
      tags: ["api"],
      errorCategory: "rate_limit_error",
      patterns: ["API errors"],
      adjustments: ["Handle errors better", "Be more resilient"],
      learning: "APIs can fail and agents need to cope with it.",
    }),
    "Classic 429 with a reflection that names no mechanism (Retry-After, quota) and no parameters.",
  );

  add(
    "vague-big-trace",
    big.event,
    reflection({
      reflectionText:
        "This was a long run with many steps and the final answer was wrong. The agents spent a lot of time scrolling and visiting pages. The whole process should be more efficient and more careful.",
      strategyText: "Be more efficient and careful.",
      confidence: 0.5,
      tags: ["web", "efficiency"],
      patterns: ["inefficient browsing"],
      adjustments: [
        "Make the process more efficient",
        "Be more careful when extracting data",
        "Improve overall accuracy",
      ],
      learning: "Long runs are more error-prone.",
    }),
    "Comments on length and effort, not on the misread row; nothing executable.",
  );

  return cases;
}

function offTopicCases(c: Corpus): CalibrationCase[] {
  const cases: CalibrationCase[] = [];
  const add = (id: string, event: TaskCompleted, r: Reflection, why: string) => {
    cases.push({ id, label: "off_topic", event, reflection: r, why });
  };

  add(
    "off-olympics-sql",
    c.trace("web.olympic-medals/skip-verify").event,
    reflection({
      reflectionText:
        "The query timed out because it joined four large tables without a selective predicate, and the planner estimated millions of rows. The approach of fetching the full history in a single statement was a fundamental flaw; the customer lookup should have been resolved first and the history paged.",
      strategyText: "Page large result sets with keyset pagination.",
      confidence: 0.8,
      tags: ["postgres", "timeout"],
      errorCategory: "timeout_error",
      patterns: ["unbounded join times out"],
      adjustments: [
        "add constraint: history queries use LIMIT 500 with keyset pagination on created_at",
        "set statement_timeout = 30s per page",
      ],
      learning: "Large histories must be fetched in pages.",
    }),
    "A good SQL-timeout lesson attached to a web question about Olympic medals.",
  );

  add(
    "off-discography-hotel",
    c.trace("web.discography-count/filter-ignored").event,
    reflection({
      reflectionText:
        "The agent booked the cheapest hotel because results were sorted by price ascending, and the user's request for a quiet, high-quality hotel was overlooked. The selection strategy prioritized price over the stated constraints.",
      strategyText: "Rank by the user's stated preferences before price.",
      confidence: 0.8,
      tags: ["travel", "hotel"],
      errorCategory: "wrong_choice",
      patterns: ["price anchoring in hotel selection"],
      adjustments: [
        "change sort=price_asc to sort=rating_desc when the budget is flexible",
        "filter hotels where rating >= 8.5 and noise reviews are positive",
      ],
      learning: "Explicit user preferences outrank price when the budget is flexible.",
    }),
    "Well-formed hotel-booking lesson for a discography counting task.",
  );

  add(
    "off-gpx-auth",
    c.trace("code.gpx-distance/wrong-unit").event,
    reflection({
      reflectionText:
        "The API call failed with 401 because the OAuth access token had expired, and the agent retried with the same token. The retry approach was flawed because it never attempted a token refresh.",
      strategyText: "Refresh tokens on 401 invalid_grant.",
      confidence: 0.8,
      tags: ["oauth", "auth"],
      errorCategory: "auth_error",
      patterns: ["retry with expired token"],
      adjustments: [
        "On 401 invalid_grant, run the refresh-token flow and retry once",
        "add constraint: never retry a 401 with the same token",
      ],
      learning: "Token expiry should be handled by refreshing.",
      attribution: {
        stepIndex: 2,
        actor: "Computer_terminal",
        toolName: "code_executor",
        confidence: 0.6,
        evidence: "401 Unauthorized",
      },
    }),
    "An auth lesson (with a made-up 401 quote) for a GPS distance task that had no API call.",
  );

  add(
    "off-gradebook-ratelimit",
    c.trace("data.gradebook/off-by-one").event,
    reflection({
      reflectionText:
        "The search API returned HTTP 429 and the agent retried immediately, ignoring the Retry-After header, which caused a second rate-limit error. The retry strategy did not respect the server's backoff instructions.",
      confidence: 0.75,
      tags: ["rate-limit"],
      errorCategory: "rate_limit_error",
      patterns: ["retry without backoff"],
      adjustments: ["set retry delay = Retry-After seconds", "increase the backoff by 2x after each 429"],
      learning: "Respect Retry-After to avoid repeated 429s.",
    }),
    "Rate-limit lesson for a spreadsheet averaging question.",
  );

  add(
    "off-meeting-wrongrow",
    c.trace("plan.meeting-timezones/calendar-overlap").event,
    reflection({
      reflectionText:
        "WebSurfer read the population figure from the adjacent row of the census table because it did not check the row label, and the Orchestrator accepted it. This is a systematic error in table lookups.",
      strategyText: "Match table rows by label before reading values.",
      confidence: 0.8,
      tags: ["web-browsing", "table-lookup"],
      errorCategory: "misread_source",
      patterns: ["adjacent row read in a table"],
      adjustments: [
        "add constraint: quote the row label with every value and compare it to the requested entity",
      ],
      learning: "Label checks prevent off-by-one row reads.",
      attribution: { actor: "WebSurfer", confidence: 0.7, evidence: "The relevant row reads" },
    }),
    "Table-misread lesson for a meeting-scheduling task (the real cause is a calendar clash).",
  );

  add(
    "off-redlist-pagination",
    c.trace("web.redlist-count/filter-ignored").event,
    reflection({
      reflectionText:
        "The API client lost one page of results because the loop used range(2, pages) and the last page was never requested. The test was then edited to match the buggy output instead of fixing the loop, an incorrect approach to a failing test.",
      strategyText: "Fix the code under test, never the assertion.",
      confidence: 0.8,
      tags: ["coding", "pagination"],
      errorCategory: "incorrect_fix",
      patterns: ["test edited instead of code"],
      adjustments: [
        "change range(2, pages) to range(2, pages + 1)",
        "add constraint: tests/ is read-only during bug fixes",
      ],
      learning: "A test passing after its assertion was changed proves nothing.",
    }),
    "Pagination bug-fix lesson for a Red List species count where WebSurfer ignored the category filter.",
  );

  add(
    "off-scheduler-currency",
    c.trace("code.scheduler-tz/naive-datetime").event,
    reflection({
      reflectionText:
        "The Assistant subtracted a price in GBP from a price in EUR without converting either to USD, so both the cheaper shop and the difference were wrong. Exchange rates had been retrieved but were not applied in the calculation.",
      confidence: 0.8,
      tags: ["currency", "price-comparison"],
      errorCategory: "unit_error",
      patterns: ["mixed currencies compared directly"],
      adjustments: [
        "add constraint: convert all prices to USD before comparing",
        "Compute conversions with code using the fetched rates",
      ],
      learning: "Keep currency codes attached to amounts until they are converted.",
      strategyText: "Convert before comparing.",
    }),
    "Currency-conversion lesson for a DST bug in a cron scheduler.",
  );

  add(
    "off-survey-nonstop",
    c.trace("data.survey-mean/rounding").event,
    reflection({
      reflectionText:
        "WebSurfer picked a one-stop itinerary because results were sorted by price and the nonstop requirement was not applied as a filter. The constraint was overlooked when reading the list.",
      confidence: 0.8,
      tags: ["flights", "constraints"],
      errorCategory: "constraint_violation",
      patterns: ["hard constraint ignored when sorting by price"],
      adjustments: [
        "set stops = 0 filter before sorting by price",
        "add constraint: the chosen flight's stop count must be quoted",
      ],
      learning: "Filters first, then sort.",
      strategyText: "Apply hard constraints as filters.",
    }),
    "Flight-constraint lesson for a survey mean that was rounded to one decimal instead of two.",
  );

  const sql = exampleEvent("01");
  add(
    "off-sql-websurfer",
    sql,
    reflection({
      reflectionText:
        "WebSurfer answered from a search-result snippet dated years before the event instead of opening the official page, and the Orchestrator accepted it. The snippet described an earlier edition, so the figure was stale.",
      strategyText: "Open the authoritative page instead of trusting snippets.",
      confidence: 0.8,
      tags: ["web-browsing", "stale-source"],
      errorCategory: "stale_source",
      patterns: ["answer taken from a search snippet"],
      adjustments: [
        "add constraint: figures must come from an opened page",
        "Reject sources dated before the event in the question",
      ],
      learning: "Snippets are of unknown date and scope.",
      attribution: {
        actor: "WebSurfer",
        confidence: 0.7,
        evidence: "The search results already answer this",
      },
    }),
    "A web-browsing lesson attached to a single-agent Postgres timeout.",
  );

  const auth = exampleEvent("03");
  add(
    "off-salesforce-csv",
    auth,
    reflection({
      reflectionText:
        "The loop over the records started at index 1 to skip a header, but the JSON input had no header, so the first record was dropped and the sum was short. The transformation was never checked against the input row count.",
      strategyText: "Check output row counts against the input.",
      confidence: 0.75,
      tags: ["data-transformation", "off-by-one"],
      errorCategory: "incorrect_logic",
      patterns: ["first record skipped as header"],
      adjustments: [
        "change range(1, len(records)) to iterate over all records",
        "add constraint: assert rows written == len(records)",
      ],
      learning: "JSON arrays have no header row.",
    }),
    "Off-by-one data-transformation lesson for an expired Salesforce token (401).",
  );

  add(
    "off-trainfare-regex",
    c.trace("web.train-fare/wrong-variant").event,
    reflection({
      reflectionText:
        "The e-mail count was too low because the regex only matched lower-case .com addresses; addresses with dots, plus signs and country-code domains were missed. The pattern was never tested against the sample that had been printed.",
      confidence: 0.8,
      tags: ["regex", "extraction"],
      errorCategory: "incorrect_logic",
      patterns: ["over-narrow regex"],
      adjustments: [
        "change the regex to [\\w.+-]+@[\\w-]+(\\.[\\w-]+)+",
        "Test the pattern on the printed sample first",
      ],
      learning: "Validate extraction patterns on real samples.",
      strategyText: "Test patterns before trusting counts.",
    }),
    "Regex lesson for a train-fare comparison where WebSurfer read the wrong fare class.",
  );

  return cases;
}

function incompleteCases(c: Corpus, big: CorpusTrace): CalibrationCase[] {
  const cases: CalibrationCase[] = [];
  const add = (id: string, event: TaskCompleted, r: Reflection, why: string) => {
    cases.push({ id, label: "incomplete", event, reflection: r, why });
  };

  let t = c.trace("web.city-population/wrong-page");
  add(
    "inc-city-wrong-page-no-adjustments",
    t.event,
    reflection({
      reflectionText: `WebSurfer opened "List of United States cities by population (2019 estimates)" instead of the current list and reported Omaha's 2019 estimate (834,409) as the 2020 census figure at step ${t.failingStepIndex}. The page title shows the wrong edition, but the figure was accepted because the table layout is identical.`,
      strategyText: "Check which edition of a page you are on before reading values.",
      confidence: 0.8,
      tags: ["web-browsing", "wrong-document"],
      errorCategory: "misread_source",
      patterns: ["value read from an older edition of the page"],
      adjustments: [],
      learning: "Old revisions of a list can look identical to the current one.",
      attribution: blame(t, "(2019 estimates)", 0.8),
    }),
    "Correct diagnosis but no adjustments at all.",
  );

  t = c.trace("web.release-date/stale-snippet");
  add(
    "inc-release-snippet-one-line",
    t.event,
    reflection({
      reflectionText: "WebSurfer used a snippet.",
      strategyText: "Open the releases page.",
      confidence: 0.6,
      tags: ["web-browsing"],
      errorCategory: "stale_source",
      patterns: ["snippet used as source"],
      adjustments: [
        "add constraint: release dates come from the GitHub releases page, not from search snippets",
      ],
      learning: "Snippets can be wrong about release dates.",
    }),
    "One-line analysis with no explanation of why the snippet was wrong.",
  );

  t = c.trace("code.isbn-validate/off-by-one");
  add(
    "inc-isbn-no-learning",
    t.event,
    reflection({
      reflectionText: `The Coder dropped the first line of library_intake.txt as a "header line" (splitlines()[1:]) at step ${t.failingStepIndex}, although the file has no header: the task states it holds one ISBN per line. One ISBN was therefore never validated, which is why the count is off.`,
      strategyText: "Check whether an input file has a header before skipping lines.",
      confidence: 0.85,
      tags: ["coding", "off-by-one"],
      errorCategory: "incorrect_logic",
      patterns: ["first data line dropped as header"],
      adjustments: [
        "change splitlines()[1:] to splitlines()",
        "add constraint: number of validated lines == wc -l of the file",
      ],
      learning: "",
      attribution: blame(t, "splitlines()[1:]  # drop header line", 0.85),
    }),
    "Good analysis and adjustments, but the learning is empty.",
  );

  t = c.trace("data.employee-roster/string-date-compare");
  add(
    "inc-roster-no-patterns-no-strategy",
    t.event,
    reflection({
      reflectionText: `At step ${t.failingStepIndex} the Coder compared start_date strings in DD/MM/YYYY form with "01/01/2020" lexicographically, so the comparison is about day and month digits, not the year. Rows were included or excluded based on the first characters of the string rather than the date.`,
      strategyText: null,
      confidence: 0.8,
      tags: ["data-analysis", "dates"],
      errorCategory: "incorrect_logic",
      patterns: [],
      adjustments: [
        'Parse start_date with pd.to_datetime(df.start_date, format="%d/%m/%Y") before comparing',
        'change the comparison to df.start_date < pd.Timestamp("2020-01-01")',
      ],
      learning: "Dates stored as DD/MM/YYYY strings do not sort chronologically.",
      attribution: blame(t, '(df["start_date"] < "01/01/2020")', 0.85),
    }),
    "No patterns and no strategy; the rest is sound.",
  );

  t = c.trace("plan.rail-itinerary/assumed-availability");
  add(
    "inc-rail-assumed-short",
    t.event,
    reflection({
      reflectionText: "Wrong train assumed.",
      strategyText: "Check operating days.",
      confidence: 0.5,
      tags: ["planning"],
      errorCategory: "assumption",
      patterns: ["assumed train runs on Sunday"],
      adjustments: ["add constraint: every leg's operating days must be confirmed for the travel date"],
      learning: "Sunday timetables differ from weekday ones.",
    }),
    "Analysis too short to be a root-cause analysis.",
  );

  t = c.trace("web.laptop-price/wrong-variant");
  add(
    "inc-laptop-variant-no-adjustments",
    t.event,
    reflection({
      reflectionText: `The question is about the Zenline Air 13 with 16 GB / 1 TB, but at step ${t.failingStepIndex} WebSurfer reported the laptopworld.co.uk price of the 16 GB / 512 GB configuration (£902.14). Both configurations were listed on the page; the cheaper one was read because it came first. The comparison in USD was therefore made between two different products.`,
      strategyText: "Match the product configuration exactly before comparing prices.",
      confidence: 0.85,
      tags: ["web-browsing", "price-comparison"],
      errorCategory: "misread_source",
      patterns: ["price of a different product variant"],
      adjustments: [],
      learning: "Product pages list several configurations; the first price is often not the one asked for.",
      attribution: blame(t, "(16 GB / 512 GB) at £902.14", 0.85),
    }),
    "Thorough analysis but the adjustments list is empty.",
  );

  t = c.trace("data.energy-usage/month-boundary");
  add(
    "inc-energy-empty-learning-no-patterns",
    t.event,
    reflection({
      reflectionText: `The Coder selected October by the month of the UTC timestamp (step ${t.failingStepIndex}) although the question asks for local Amsterdam time. Readings between 22:00/23:00 UTC on the last day of September count as October locally and were missed, while 23:00–24:00 UTC on 31 October, which is already 1 November in Amsterdam, was wrongly included.`,
      strategyText: null,
      confidence: 0.8,
      tags: ["data-analysis", "time-zones"],
      errorCategory: "incorrect_logic",
      patterns: [],
      adjustments: [
        'change the month selection to use timestamp_utc.dt.tz_convert("Europe/Amsterdam").dt.month_name()',
      ],
      learning: "",
      attribution: blame(t, 'df["timestamp_utc"].dt.month_name() == "October"', 0.85),
    }),
    "Correct cause and one fix, but no patterns, no strategy and no learning.",
  );

  t = c.trace("code.pagination-fix/skip-verify");
  add(
    "inc-pagination-verifier-short",
    t.event,
    reflection({
      reflectionText: "The Verifier did not run the tests.",
      strategyText: "Run tests.",
      confidence: 0.6,
      tags: ["coding", "verification"],
      errorCategory: "skipped_verification",
      patterns: ["verification skipped"],
      adjustments: ["add constraint: the Verifier must run tests/test_client.py before approving a fix"],
      learning: "Verification must execute the tests.",
    }),
    "Analysis is a single sentence without the why (the Coder had flagged a possible double count).",
  );

  t = c.trace("plan.conference-hotel/guess");
  add(
    "inc-hotel-guess-no-adjustments",
    t.event,
    reflection({
      reflectionText: `When the details page showed no rooms, the Orchestrator assumed "about €119 per night, typical for the area" and answered €357 at step ${t.failingStepIndex}. The figure was never seen on any page; the Orchestrator presented an estimate as the booking price.`,
      strategyText: "Do not estimate prices that the task asks to look up.",
      confidence: 0.8,
      tags: ["planning", "hotel", "hallucination"],
      errorCategory: "fabricated_answer",
      patterns: ["price assumed when the page showed no rates"],
      adjustments: [],
      learning: "An estimated price is not an answer to 'what does the stay cost'.",
      attribution: blame(t, "I will assume about €119 per night", 0.85),
    }),
    "Diagnosis is right; there are no adjustments.",
  );

  const cal = exampleEvent("04");
  add(
    "inc-calendar-no-adjustments-learning",
    cal,
    reflection({
      reflectionText:
        'The calendar tool rejected start="next Tuesday 3pm" with 400 validation_failed because it expects an RFC 3339 date-time; the agent retried with the same value instead of converting it.',
      strategyText: "Normalise dates before calling tools.",
      confidence: 0.8,
      tags: ["calendar", "validation"],
      errorCategory: "validation_error",
      patterns: ["natural-language date sent to a typed field"],
      adjustments: [],
      learning: "",
      attribution: blameStep(cal, 3, "next Tuesday 3pm", 0.8),
    }),
    "Classic 400 case: analysis fine, but no adjustments and no learning.",
  );

  add(
    "inc-big-trace-one-line",
    big.event,
    reflection({
      reflectionText: "Wrong row.",
      strategyText: null,
      confidence: 0.5,
      tags: ["web-browsing"],
      errorCategory: "misread_source",
      patterns: [],
      adjustments: ["add constraint: quote the row label with the value"],
      learning: "Check row labels.",
    }),
    "Two-word analysis and no patterns on a very long trace.",
  );

  return cases;
}

/** The labelled set: good, vague, off-topic, incomplete and duplicate reflections on failed tasks. */
export function calibrationSet(): CalibrationCase[] {
  const corpus = new Corpus();
  const big = bigTrace();
  return [
    ...goodCases(corpus),
    ...duplicateCases(corpus),
    ...vagueCases(corpus, big),
    ...offTopicCases(corpus),
    ...incompleteCases(corpus, big),
  ];
}
