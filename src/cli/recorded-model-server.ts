import { readdir, readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import type { TaskCompleted } from "../domain/contracts/index.js";

/**
 * A local OpenAI-compatible server that replays what a capable model answered, once, to the exact
 * requests of the `openai` generator (test/fixtures/recorded-answers/PROVENANCE.md says who
 * answered and how). It is not a model: a request whose trace has no recorded answer gets a 500,
 * so nothing is ever answered that was not recorded. The demo's second pass and the tests and
 * benchmarks that replay recorded answers use it.
 */

/** One recorded answer as stored in test/fixtures/recorded-answers/<kind>/<id>.json. */
export const RecordedAnswer = z.object({
  /** `examples/<file>/<index in the file>` or the real log's id (bench/real-logs/real-logs.ts). */
  id: z.string().min(1),
  eventId: z.string().min(1),
  promptFile: z.string(),
  /** How it was written: `json`, `fenced`, `prose-around`, `extra-keys`. */
  form: z.string(),
  /** The raw answer text. */
  content: z.string().min(1),
  /** Answers to the same request written to be bad on purpose (real logs only). */
  variants: z.record(z.string(), z.string()).optional(),
});
export type RecordedAnswer = z.infer<typeof RecordedAnswer>;

/** A recorded answer with the failure whose request it answers. */
export interface Recording {
  event: TaskCompleted;
  answer: { content: string };
}

/** The recorded answers of a directory, by file name; a file that is not one is an error naming it. */
export async function loadRecordedAnswers(dir: string): Promise<RecordedAnswer[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  return Promise.all(
    files.map(async (file) => {
      const parsed = RecordedAnswer.safeParse(JSON.parse(await readFile(`${dir}/${file}`, "utf8")));
      if (!parsed.success)
        throw new Error(`${dir}/${file} is not a recorded answer: ${z.prettifyError(parsed.error)}`);
      return parsed.data;
    }),
  );
}

/** The parts of a chat request the replay reads. */
export interface ChatBody {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string };
  max_completion_tokens?: number;
}

export interface TraceData {
  task?: { description?: string; goal?: string };
  outcome?: string;
  error?: { message?: string; category?: string } | null;
  totalEvents?: number;
  events?: { index?: number; eventId?: string; type: string; content?: string; toolName?: string }[];
}

/** The trace-data block of a chat request (what the generator sent as untrusted data). */
export function traceDataOf(body: ChatBody): TraceData | null {
  const user = body.messages.find((m) => m.role === "user")?.content ?? "";
  const match = /<trace-data-([a-z0-9]+)>\n([\s\S]*?)\n<\/trace-data-\1>/.exec(user);
  return match?.[2] ? (JSON.parse(match[2]) as TraceData) : null;
}

/** Whether a request's trace data is the trace of `event`: its task, error and steps. */
export function isTraceOf(data: TraceData, event: TaskCompleted): boolean {
  // A long text reaches the prompt cut ("… [n more characters]"): compare what is before the cut.
  const begins = (whole: string | undefined, shown: string | undefined) =>
    shown === undefined || (whole ?? "").startsWith(shown.split("…")[0] ?? "");
  if (data.task?.description === undefined || !begins(event.task.description, data.task.description))
    return false;
  if (data.totalEvents !== event.events.length) return false;
  if (!begins(event.error?.message, data.error?.message)) return false;
  return (data.events ?? []).every((step) => {
    if (step.index === undefined) return true;
    const original = event.events[step.index];
    // A cut step shows its head, then `…[cut n characters]…`.
    const head = step.content?.split("\n…[cut ")[0];
    if (original === undefined || original.eventId !== step.eventId) return false;
    return head === undefined || original.content.startsWith(head);
  });
}

/**
 * The recording that answers a chat request: the one whose failure's trace the request carries
 * (found by the trace's task, error and step ids: the canary and the block's nonce are random per
 * request). A repair request carries the same trace and gets the same answer, as a model asked
 * again answers alike.
 */
export function findRecording<R extends Recording>(recordings: readonly R[], body: ChatBody): R | undefined {
  const data = traceDataOf(body);
  return data ? recordings.find((r) => isTraceOf(data, r.event)) : undefined;
}

/** A chat completion in the API's shape; token counts are estimates (4 characters a token). */
export function chatCompletion(body: ChatBody, content: string) {
  const promptTokens = Math.ceil(body.messages.reduce((n, m) => n + m.content.length, 0) / 4);
  const completionTokens = Math.ceil(content.length / 4);
  return {
    id: "chatcmpl-recorded",
    object: "chat.completion",
    created: 1_700_000_000,
    model: body.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, refusal: null },
        finish_reason: "stop",
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

export interface RecordedModelServer {
  /** The base URL for `OPENAI_BASE_URL` (ends in `/v1`). */
  url: string;
  /** Chat requests answered from a recording, and those that had none (answered 500). */
  counts(): { answered: number; unrecorded: number };
  close(): Promise<void>;
}

/** Starts the replay server on 127.0.0.1 at a free port: `POST /v1/chat/completions` only. */
export async function startRecordedModelServer(
  recordings: readonly Recording[],
): Promise<RecordedModelServer> {
  const counts = { answered: 0, unrecorded: 0 };
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST" || !(req.url ?? "").endsWith("/chat/completions")) {
      reply(res, 404, { error: { message: "only POST /v1/chat/completions is served" } });
      return;
    }
    let body: ChatBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatBody;
      if (!Array.isArray(body.messages)) throw new Error("no messages");
    } catch {
      reply(res, 400, { error: { message: "the body is not a chat completion request" } });
      return;
    }
    const recording = findRecording(recordings, body);
    if (!recording) {
      counts.unrecorded += 1;
      reply(res, 500, { error: { message: "no recorded answer for this trace" } });
      return;
    }
    counts.answered += 1;
    reply(res, 200, chatCompletion(body, recording.answer.content));
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The server never keeps a process alive on its own: one that fails before closing it still exits.
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}/v1`,
    counts: () => ({ ...counts }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}
