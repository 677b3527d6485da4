import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  findRecording,
  traceDataOf,
  type ChatBody,
  type Recording,
} from "../../src/cli/recorded-model-server.js";

export { traceDataOf, type ChatBody, type TraceData } from "../../src/cli/recorded-model-server.js";

/**
 * A local OpenAI-compatible HTTP server for tests and benchmarks: `/v1/chat/completions` and
 * `/v1/embeddings`. Replies are scripted per request (a queue per route, then a default
 * responder), every request is recorded, and `latencyMs` delays every reply (fixed-latency mode).
 * In replay mode (`replayModel`) it answers with what a capable model answered to the same
 * failure's request, found as src/cli/recorded-model-server.ts finds it (the demo's replay
 * server, which serves recorded answers only).
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export type FakeReply =
  /** A chat completion whose message content is `content`. */
  | {
      kind: "completion";
      content: string;
      promptTokens?: number;
      completionTokens?: number;
      finishReason?: string;
      /** A refusal as the API reports it: `message.refusal` set, `content` null. */
      refusal?: string;
    }
  /** Any JSON body with a status (errors: 429 with `retry-after`, 500, 401, ...). */
  | { kind: "status"; status: number; body?: unknown; headers?: Record<string, string> }
  /** Deterministic embeddings for the request's inputs. */
  | { kind: "embeddings"; dimensions?: number }
  /** A body that is not what the route promises (HTML, half a JSON document, ...), as it is. */
  | { kind: "raw"; status?: number; body: string; contentType?: string }
  /** Sends the headers and the first `bytes` of a completion, then drops the connection. */
  | { kind: "cut"; bytes?: number }
  /** Never answers: the client's timeout has to fire. */
  | { kind: "hang" }
  /** Waits, then gives `then`. */
  | { kind: "delay"; ms: number; then: FakeReply };

export type Responder = (request: RecordedRequest) => FakeReply;

export interface FakeOpenAiServerOptions {
  /** Added before every reply. */
  latencyMs?: number;
  chat?: Responder;
  embeddings?: Responder;
}

/** Deterministic unit vector from text (sha256-seeded), so equal inputs embed equally. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const out: number[] = [];
  let block = createHash("sha256").update(text).digest();
  for (let i = 0; out.length < dimensions; i += 1) {
    if (i > 0 && i % 32 === 0) block = createHash("sha256").update(block).digest();
    out.push(((block[i % 32] ?? 0) - 127.5) / 127.5);
  }
  const norm = Math.sqrt(out.reduce((s, v) => s + v * v, 0));
  return out.map((v) => v / norm);
}

function completion(reply: Extract<FakeReply, { kind: "completion" }>, model: string) {
  const promptTokens = reply.promptTokens ?? 100;
  const completionTokens = reply.completionTokens ?? 50;
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        message:
          reply.refusal === undefined
            ? { role: "assistant", content: reply.content, refusal: null }
            : { role: "assistant", content: null, refusal: reply.refusal },
        finish_reason: reply.finishReason ?? "stop",
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

export async function startFakeOpenAiServer(options: FakeOpenAiServerOptions = {}) {
  const requests: RecordedRequest[] = [];
  /** Requests being answered now, and the most there ever were at once (since the last reset). */
  const concurrency = { now: 0, max: 0 };
  const queues = { chat: [] as FakeReply[], embeddings: [] as FakeReply[] };
  const state = {
    latencyMs: options.latencyMs ?? 0,
    chat:
      options.chat ??
      ((): FakeReply => ({ kind: "status", status: 500, body: { error: { message: "no script" } } })),
    embeddings: options.embeddings ?? ((): FakeReply => ({ kind: "embeddings" })),
  };
  const timers = new Set<NodeJS.Timeout>();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function send(res: ServerResponse, reply: FakeReply, recorded: RecordedRequest): Promise<void> {
    if (reply.kind === "hang") return; // the socket stays open until the client gives up or we close
    if (reply.kind === "delay") {
      await wait(reply.ms);
      return send(res, reply.then, recorded);
    }
    if (reply.kind === "raw") {
      if (!res.destroyed)
        res
          .writeHead(reply.status ?? 200, { "content-type": reply.contentType ?? "application/json" })
          .end(reply.body);
      return;
    }
    if (reply.kind === "cut") {
      const full = JSON.stringify(
        completion({ kind: "completion", content: '{"reflectionText": "cut short' }, "fake"),
      );
      if (res.destroyed) return;
      res.writeHead(200, { "content-type": "application/json", "content-length": String(full.length) });
      res.write(full.slice(0, reply.bytes ?? 40));
      res.destroy();
      return;
    }
    let status = 200;
    let body: unknown;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (reply.kind === "completion") {
      body = completion(reply, (recorded.body as ChatBody).model);
    } else if (reply.kind === "embeddings") {
      const input = (recorded.body as { input: string | string[]; model: string }).input;
      const texts = Array.isArray(input) ? input : [input];
      body = {
        object: "list",
        model: (recorded.body as { model: string }).model,
        data: texts.map((text, index) => ({
          object: "embedding",
          index,
          embedding: fakeEmbedding(text, reply.dimensions ?? 64),
        })),
        usage: { prompt_tokens: texts.length * 10, total_tokens: texts.length * 10 },
      };
    } else {
      status = reply.status;
      body = reply.body ?? { error: { message: `status ${String(reply.status)}`, type: "fake" } };
      Object.assign(headers, reply.headers ?? {});
    }
    if (!res.destroyed) res.writeHead(status, headers).end(JSON.stringify(body));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers: req.headers,
      body: text ? (JSON.parse(text) as unknown) : null,
    };
    requests.push(recorded);
    const route = recorded.path.endsWith("/chat/completions")
      ? "chat"
      : recorded.path.endsWith("/embeddings")
        ? "embeddings"
        : null;
    if (!route) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
      return;
    }
    const next = queues[route].shift() ?? state[route](recorded);
    concurrency.now += 1;
    concurrency.max = Math.max(concurrency.max, concurrency.now);
    try {
      if (state.latencyMs > 0) await wait(state.latencyMs);
      await send(res, next, recorded);
    } finally {
      concurrency.now -= 1;
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${String(port)}/v1`,
    requests,
    /** Recorded chat-completion request bodies, oldest first. */
    chatRequests(): ChatBody[] {
      return requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body as ChatBody);
    },
    /** Replies for the next chat requests, in order; then the default responder answers. */
    enqueueChat(...replies: FakeReply[]): void {
      queues.chat.push(...replies);
    },
    enqueueEmbeddings(...replies: FakeReply[]): void {
      queues.embeddings.push(...replies);
    },
    setChatResponder(responder: Responder): void {
      state.chat = responder;
    },
    setLatency(ms: number): void {
      state.latencyMs = ms;
    },
    /** The most requests that were being answered at the same time since the last reset. */
    maxConcurrent(): number {
      return concurrency.max;
    },
    reset(): void {
      concurrency.max = concurrency.now;
      requests.length = 0;
      queues.chat.length = 0;
      queues.embeddings.length = 0;
    },
    async close(): Promise<void> {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}

export type FakeOpenAiServer = Awaited<ReturnType<typeof startFakeOpenAiServer>>;

/**
 * A cooperative "model": reads the trace data and answers with a root-cause reflection in the
 * contract's shape, quoting the task and error so relevance holds, and naming the pattern it
 * believes the failure shows, as the prompt asks. Good enough for the quality rules.
 */
export function helpfulModel(request: RecordedRequest): FakeReply {
  const data = traceDataOf(request.body as ChatBody) ?? {};
  const task = data.task ?? {};
  const error = data.error ?? null;
  const failures = (data.events ?? [])
    .filter((e) => e.type === "error_event")
    .map((e) => [e.toolName, e.content].filter(Boolean).join(" "));
  const facts = [task.description, task.goal, error?.message, ...failures].filter(Boolean).join(". ");
  const reflection = {
    reflectionText: `${facts}. Root cause: the approach assumed the default timeout would hold because earlier runs were small; this incorrect assumption in the strategy, not the single slow call, caused the failure, and the reasoning never checked the size of the work before running it.`,
    strategyText:
      "Before running expensive work, estimate its size and set limits and pagination accordingly.",
    importance: 0.8,
    confidence: 0.85,
    tags: ["timeout", "performance"],
    errorCategory: error?.category ?? null,
    // As the prompt asks, and as real models do from one trace: a pattern it cannot prove yet.
    patterns: [
      `${error?.category ?? "failure"} on ${(data.events ?? []).find((e) => e.toolName)?.toolName ?? "the main tool"}`,
    ],
    adjustments: ["set timeout_ms = 60000", "add constraint: page_size <= 500 for large result sets"],
    learning: `${task.description ?? "This task"} needs its work sized before it runs; unbounded work exceeds fixed limits.`,
  };
  return {
    kind: "completion",
    content: JSON.stringify(reflection),
    promptTokens: 1200,
    completionTokens: 300,
  };
}

/**
 * Replay mode: answers a chat request with the recorded answer to the failure whose trace the
 * request carries (found by the trace's task, error and step ids: the canary and the block's nonce
 * are random per request), a repair request with the same answer (a model asked again answers
 * alike), and any other request with `fallback` (a 500 by default, so a test never silently gets
 * an answer that was not recorded). `answerOf` picks what to serve: the answer as recorded, or a
 * variant of it (fenced, cut, wrapped in prose). Token counts are estimates (4 characters a token).
 */
export function replayModel(
  recordings: readonly Recording[],
  options: {
    answerOf?: (recording: Recording) => FakeReply;
    fallback?: Responder;
  } = {},
): Responder {
  return (request) => {
    const body = request.body as ChatBody;
    const recording = findRecording(recordings, body);
    if (!recording)
      return (
        options.fallback?.(request) ?? {
          kind: "status",
          status: 500,
          body: { error: { message: "no recorded answer for this trace" } },
        }
      );
    if (options.answerOf) return options.answerOf(recording);
    const promptChars = body.messages.reduce((n, m) => n + m.content.length, 0);
    return {
      kind: "completion",
      content: recording.answer.content,
      promptTokens: Math.ceil(promptChars / 4),
      completionTokens: Math.ceil(recording.answer.content.length / 4),
    };
  };
}
