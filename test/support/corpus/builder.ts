import type { TraceEvent, TraceEventType } from "../../../src/domain/contracts/index.js";
import { int, pick, type Rng } from "./random.js";
import { fakeHash, placeName, prose, webSurferMessage } from "./text.js";

export type Actor =
  "Orchestrator" | "WebSurfer" | "FileSurfer" | "Coder" | "Computer_terminal" | "Assistant" | "Verifier";

/** One step of a scripted trace; `fail` marks the step where the task went wrong. */
export interface StepSpec {
  actor: Actor;
  type: TraceEventType;
  content: string;
  toolName?: string;
  error?: { message?: string; code?: string };
  metadata?: Record<string, unknown>;
  fail?: boolean;
}

export const teamDescriptions: Record<Actor, string> = {
  Orchestrator:
    "Orchestrator: plans the work, keeps the task and progress ledgers, and decides who speaks next.",
  WebSurfer:
    "WebSurfer: A helpful assistant with access to a web browser. Ask them to perform web searches, open pages, and interact with content (e.g., clicking links, scrolling the viewport, filling in form fields, etc.). It can also summarize the entire page, or answer questions based on the content of the page.",
  FileSurfer:
    "FileSurfer: An agent that can handle local files. It can open a file, convert it to text (PDF, DOCX, XLSX, CSV, PPTX), and scroll through it.",
  Coder:
    "Coder: A helpful and general-purpose AI assistant that has strong language skills, Python skills, and Linux command line skills.",
  Computer_terminal:
    "Computer_terminal: A computer terminal that performs no other action than running Python scripts (provided to it quoted in ```python code blocks), or sh shell scripts (provided to it quoted in ```sh code blocks).",
  Assistant:
    "Assistant: A general problem solver that reasons over the evidence collected by the team and drafts the answer.",
  Verifier:
    "Verifier: Checks the draft answer against the sources and the requested format before it is submitted.",
};

export interface PlanSheet {
  given: string[];
  lookup: string[];
  derive: string[];
  guesses: string[];
  plan: string[];
}

export function planText(question: string, team: readonly Actor[], sheet: PlanSheet): string {
  const bullets = (items: string[]) =>
    items.length ? items.map((i) => `   - ${i}`).join("\n") : "   - None";
  return [
    "We are working to address the following user request:",
    "",
    question,
    "",
    "To answer this request we have assembled the following team:",
    "",
    ...team.filter((a) => a !== "Orchestrator").map((a) => teamDescriptions[a]),
    "",
    "Here is an initial fact sheet to consider:",
    "",
    "1. GIVEN OR VERIFIED FACTS",
    bullets(sheet.given),
    "",
    "2. FACTS TO LOOK UP",
    bullets(sheet.lookup),
    "",
    "3. FACTS TO DERIVE",
    bullets(sheet.derive),
    "",
    "4. EDUCATED GUESSES",
    bullets(sheet.guesses),
    "",
    "Here is the plan to follow as best as possible:",
    "",
    ...sheet.plan.map((p) => `- ${p}`),
  ].join("\n");
}

export interface LedgerInput {
  satisfied?: boolean;
  satisfiedReason: string;
  loop?: boolean;
  loopReason?: string;
  progress?: boolean;
  progressReason?: string;
  next: Actor;
  instruction: string;
  instructionReason?: string;
}

export function ledgerText(l: LedgerInput): string {
  const body = {
    is_request_satisfied: { reason: l.satisfiedReason, answer: l.satisfied ?? false },
    is_in_loop: {
      reason: l.loopReason ?? "The team is not repeating the same requests.",
      answer: l.loop ?? false,
    },
    is_progress_being_made: {
      reason: l.progressReason ?? "New information has been gathered in the last step.",
      answer: l.progress ?? true,
    },
    next_speaker: { reason: `${l.next} is the right agent for the next step.`, answer: l.next },
    instruction_or_question: {
      reason: l.instructionReason ?? "This is the next step of the plan.",
      answer: l.instruction,
    },
  };
  return `Updated Ledger:\n${JSON.stringify(body, null, 2)}`;
}

export const step = {
  ledger(l: LedgerInput, fail = false): StepSpec {
    return { actor: "Orchestrator", type: "llm_response", content: ledgerText(l), fail };
  },
  instruct(to: Actor, text: string): StepSpec {
    return { actor: "Orchestrator", type: "llm_response", content: `Orchestrator (-> ${to}): ${text}` };
  },
  /** A ledger naming the next speaker, followed by the instruction, as Magentic-One logs them. */
  delegate(
    to: Actor,
    instruction: string,
    satisfiedReason = "The requested information has not been found yet.",
  ): StepSpec[] {
    return [step.ledger({ satisfiedReason, next: to, instruction }), step.instruct(to, instruction)];
  },
  browse(action: string, call: string): StepSpec {
    return { actor: "WebSurfer", type: "tool_call", toolName: "web_browser", content: `${action}\n${call}` };
  },
  page(content: string, extra: Partial<StepSpec> = {}): StepSpec {
    return { actor: "WebSurfer", type: "tool_response", toolName: "web_browser", content, ...extra };
  },
  say(actor: Actor, content: string, fail = false): StepSpec {
    return { actor, type: "llm_response", content, fail };
  },
  code(content: string, fail = false): StepSpec {
    return { actor: "Coder", type: "llm_response", content, fail };
  },
  terminal(exitcode: number, output: string, fail = false): StepSpec {
    const content = `exitcode: ${exitcode} (${exitcode === 0 ? "execution succeeded" : "execution failed"})\nCode output: ${output}`;
    return exitcode === 0
      ? { actor: "Computer_terminal", type: "tool_response", toolName: "code_executor", content, fail }
      : {
          actor: "Computer_terminal",
          type: "tool_response",
          toolName: "code_executor",
          content,
          error: { message: lastLine(output), code: `exitcode_${exitcode}` },
          fail,
        };
  },
  fileCall(action: string): StepSpec {
    return { actor: "FileSurfer", type: "tool_call", toolName: "file_browser", content: action };
  },
  file(content: string, extra: Partial<StepSpec> = {}): StepSpec {
    return { actor: "FileSurfer", type: "tool_response", toolName: "file_browser", content, ...extra };
  },
};

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return lines[lines.length - 1] ?? text;
}

/** What detours (scrolling, cookie banners, blocked pages, listing files) may talk about. */
export interface DetourContext {
  topic: string;
  site: string;
  url: string;
  file?: string;
}

export type DetourKind = "web" | "code" | "file";

/** What has already happened in a trace's detours (a cookie banner is accepted once). */
export interface DetourState {
  cookies: boolean;
  replanned: boolean;
  listed?: boolean;
}

/** A few steps that make a trace long the way real runs are, without changing what it found. */
export function detour(
  rng: Rng,
  kind: DetourKind,
  ctx: DetourContext,
  state: DetourState = { cookies: false, replanned: false },
): StepSpec[] {
  if (kind === "code") return codeDetour(rng, ctx, state);
  if (kind === "file") return rng() < 0.5 ? fileDetour(rng, ctx) : codeDetour(rng, ctx, state);
  let roll = rng();
  if (roll >= 0.4 && roll < 0.5 && state.cookies) roll = 0.55;
  if (roll >= 0.9 && state.replanned) roll = 0.85;
  if (roll >= 0.5 && roll < 0.6) {
    const thread = `https://forum.example.net/t/${ctx.topic.replace(/\s+/g, "-")}/${int(rng, 1000, 99_999)}`;
    return [
      step.browse(
        `I clicked a search result that looked relevant: '${ctx.topic} - discussion'.`,
        `visit_url("${thread}")`,
      ),
      step.page(
        webSurferMessage(
          "I opened the discussion thread.",
          `${ctx.topic} - discussion`,
          thread,
          rng,
          `${prose(rng, int(rng, 4, 9), ctx.topic)}\nReply · Quote · Report\n${prose(rng, 3, ctx.topic)}`,
        ),
      ),
      step.ledger({
        satisfiedReason: "The forum thread does not contain the requested information.",
        progress: false,
        progressReason: "The last page was not relevant.",
        next: "WebSurfer",
        instruction: "Go back to the previous page.",
      }),
    ];
  }
  if (roll >= 0.9) {
    state.replanned = true;
    return [
      step.say(
        "Orchestrator",
        `We are making slow progress. Here is an updated plan:\n- Stay on ${ctx.site} rather than trying mirrors.\n- Use the page's own navigation to reach the section about ${ctx.topic}.\n- Report the exact text of the relevant entry.`,
      ),
      ...step.delegate(
        "WebSurfer",
        `Use the navigation on ${ctx.site} to reach the section about ${ctx.topic}.`,
      ),
    ];
  }
  if (roll < 0.4) {
    const instruction = `Please scroll down on the current page and report any part of it that mentions ${ctx.topic}.`;
    return [
      ...step.delegate("WebSurfer", instruction),
      step.browse("I scrolled down one page in the browser.", "page_down()"),
      step.page(
        webSurferMessage(
          "I scrolled down one page in the browser.",
          ctx.site,
          ctx.url,
          rng,
          prose(rng, int(rng, 6, 16), ctx.topic),
        ),
      ),
    ];
  }
  if (roll < 0.5) {
    state.cookies = true;
    return [
      step.browse("I clicked 'Accept all'.", "click(id=cookie-consent-accept)"),
      step.page(
        webSurferMessage(
          "I clicked 'Accept all'.",
          ctx.site,
          ctx.url,
          rng,
          `We value your privacy\nWe and our ${int(rng, 80, 900)} partners store and/or access information on a device. Your choices have been saved.\n${prose(rng, 3, ctx.topic)}`,
        ),
      ),
    ];
  }
  if (roll < 0.8) {
    const mirror = `https://${placeName(rng).toLowerCase().replace(/\s+/g, "")}.org/${ctx.topic.replace(/\s+/g, "-")}`;
    return [
      ...step.delegate("WebSurfer", `Try opening ${mirror} as an alternative source for ${ctx.topic}.`),
      step.browse(`I typed '${mirror}' into the browser address bar.`, `visit_url("${mirror}")`),
      step.page(
        `Access Denied\nYou don't have permission to access "${mirror}" on this server.\nReference #18.${fakeHash(rng, 8)}.${int(rng, 1_600_000_000, 1_700_000_000)}`,
        { error: { message: "403 Forbidden", code: "HTTP_403" } },
      ),
      step.ledger({
        satisfiedReason: "The alternative source is blocked.",
        progress: false,
        progressReason: "The last page returned 403 Forbidden.",
        next: "WebSurfer",
        instruction: `Go back to ${ctx.site} and continue there.`,
      }),
    ];
  }
  return [
    step.browse("I clicked the control 'Show more'.", "click(id=show-more)"),
    step.page(
      webSurferMessage(
        "I clicked the control 'Show more'.",
        ctx.site,
        ctx.url,
        rng,
        prose(rng, int(rng, 4, 10), ctx.topic),
      ),
    ),
  ];
}

function codeDetour(rng: Rng, ctx: DetourContext, state: DetourState): StepSpec[] {
  let roll = rng();
  if (roll < 0.35 && state.listed) roll = 0.35 + rng() * 0.65;
  if (roll < 0.35) {
    state.listed = true;
    return [
      step.code("Let me look at what is in the working directory first.\n\n```sh\nls -la\n```"),
      step.terminal(
        0,
        [
          `total ${int(rng, 20, 400)}`,
          "drwxr-xr-x 5 user user 4096 .",
          "drwxr-xr-x 3 user user 4096 ..",
          `-rw-r--r-- 1 user user ${int(rng, 200, 90_000)} ${ctx.file ?? "data.csv"}`,
          `-rw-r--r-- 1 user user ${int(rng, 100, 4000)} README.md`,
          `drwxr-xr-x 2 user user 4096 tests`,
        ].join("\n"),
      ),
    ];
  }
  if (roll < 0.65) {
    const pkg = pick(rng, ["pandas", "openpyxl", "python-dateutil", "requests", "pytest"]);
    return [
      step.code(`We need ${pkg}; install it first.\n\n\`\`\`sh\npip install ${pkg}\n\`\`\``),
      step.terminal(
        0,
        `Requirement already satisfied: ${pkg} in /usr/local/lib/python3.11/site-packages (${int(rng, 1, 3)}.${int(rng, 0, 12)}.${int(rng, 0, 9)})\nWARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour with the system package manager.`,
      ),
    ];
  }
  return [
    step.code(
      `Let me print the first lines of the input to check its structure.\n\n\`\`\`sh\nhead -n 5 ${ctx.file ?? "input.txt"}\n\`\`\``,
    ),
    step.terminal(
      0,
      ctx.file?.endsWith(".xlsx")
        ? "PK\u0003\u0004\u0014\u0000\u0006\u0000[Content_Types].xml (binary spreadsheet data; use pandas.read_excel instead)"
        : prose(rng, int(rng, 2, 5), ctx.topic),
    ),
  ];
}

function fileDetour(rng: Rng, ctx: DetourContext): StepSpec[] {
  return [
    ...step.delegate("FileSurfer", `Scroll down in ${ctx.file ?? "the file"} and report what follows.`),
    step.fileCall("page_down()"),
    step.file(
      `Address: file:///workspace/${ctx.file ?? "input"}\nViewport position: Showing page ${int(rng, 2, 6)} of ${int(rng, 6, 12)}.\n=======================\n${prose(rng, int(rng, 3, 8), ctx.topic)}`,
    ),
  ];
}

/** Appends steps, giving each a unique id and a timestamp later than the previous one. */
export class TraceBuilder {
  readonly steps: TraceEvent[] = [];
  failingIndex = -1;
  failingActor = "";
  private clock: number;

  constructor(
    private readonly rng: Rng,
    private readonly idPrefix: string,
    startMs: number,
  ) {
    this.clock = startMs;
  }

  add(spec: StepSpec): void {
    const gap =
      spec.type === "tool_call"
        ? int(this.rng, 150, 1200)
        : spec.type === "tool_response"
          ? int(this.rng, 700, 9000) + Math.min(20_000, spec.content.length)
          : int(this.rng, 1500, 16_000);
    this.clock += gap;
    const event: TraceEvent = {
      eventId: `${this.idPrefix}-s${String(this.steps.length).padStart(3, "0")}`,
      type: spec.type,
      timestamp: new Date(this.clock).toISOString(),
      content: spec.content,
      actor: spec.actor,
    };
    if (spec.toolName) event.toolName = spec.toolName;
    if (spec.error) event.error = spec.error;
    if (spec.metadata) event.metadata = spec.metadata;
    if (spec.fail) {
      if (this.failingIndex >= 0) throw new Error(`${this.idPrefix}: two failing steps`);
      this.failingIndex = this.steps.length;
      this.failingActor = spec.actor;
    }
    this.steps.push(event);
  }

  get now(): number {
    return this.clock;
  }
}
