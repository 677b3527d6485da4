/**
 * The LLM half of the chaos run (`bench/chaos.ts --llm-faults`): a fake OpenAI-compatible server
 * whose behaviour follows a schedule of fault phases over the production window, and a tally of
 * what the processors logged about it (in-process retries, held events, pauses, the circuit).
 */
import {
  helpfulModel,
  startFakeOpenAiServer,
  type FakeReply,
  type RecordedRequest,
} from "../test/support/fake-openai-server.js";

export type FaultPhase = "healthy" | "hang" | "5xx" | "429" | "garbage" | "outage";

/** Phases as fractions of the production window; after it, the server is healthy. */
const schedule: { until: number; phase: FaultPhase }[] = [
  { until: 0.1, phase: "healthy" },
  { until: 0.18, phase: "hang" },
  { until: 0.28, phase: "healthy" },
  { until: 0.36, phase: "5xx" },
  { until: 0.44, phase: "healthy" },
  { until: 0.54, phase: "429" },
  { until: 0.66, phase: "garbage" },
  { until: 0.7, phase: "healthy" },
  { until: 0.9, phase: "outage" },
];

/** Ways a model's answer can be unusable; rotated through in the garbage phase. */
const garbageKinds = [
  "prose",
  "truncated-json",
  "schema-violation",
  "finish-length",
  "html-body",
  "cut-connection",
] as const;

function garbageReply(kind: (typeof garbageKinds)[number], request: RecordedRequest): FakeReply {
  const good = helpfulModel(request);
  const content = good.kind === "completion" ? good.content : "{}";
  switch (kind) {
    case "prose":
      return {
        kind: "completion",
        content: "Sure! Here is my reflection: the query was slow. Hope this helps.",
      };
    case "truncated-json":
      return { kind: "completion", content: content.slice(0, Math.floor(content.length / 2)) };
    case "schema-violation":
      return {
        kind: "completion",
        content: JSON.stringify({ reflectionText: 42, strategyText: null, importance: "high", tags: "x" }),
      };
    case "finish-length":
      return { kind: "completion", content: content.slice(0, 80), finishReason: "length" };
    case "html-body":
      return {
        kind: "raw",
        status: 200,
        body: "<html><body>Bad gateway</body></html>",
        contentType: "text/html",
      };
    case "cut-connection":
      return { kind: "cut", bytes: 60 };
  }
}

export async function startFaultyLlm(windowMs: number, healthyLatencyMs = 30) {
  let startedAt = 0;
  let n = 0;
  /** Replies given, per phase and kind of reply. */
  const replies = new Map<string, number>();
  const count = (phase: FaultPhase, kind: string) => {
    const key = `${phase} ${kind}`;
    replies.set(key, (replies.get(key) ?? 0) + 1);
  };
  const phaseNow = (): FaultPhase => {
    if (startedAt === 0) return "healthy";
    const at = (Date.now() - startedAt) / windowMs;
    return schedule.find((s) => at < s.until)?.phase ?? "healthy";
  };
  const healthy = (reply: FakeReply): FakeReply => ({ kind: "delay", ms: healthyLatencyMs, then: reply });

  function respond(route: "chat" | "embeddings", request: RecordedRequest): FakeReply {
    n += 1;
    const phase = phaseNow();
    const good = route === "chat" ? helpfulModel(request) : ({ kind: "embeddings" } as const);
    switch (phase) {
      case "hang":
        count(phase, "hang");
        return { kind: "hang" };
      case "5xx": {
        const status = n % 2 === 0 ? 500 : 503;
        count(phase, String(status));
        return { kind: "status", status };
      }
      case "429":
        if (n % 3 !== 0) {
          count(phase, "429");
          return { kind: "status", status: 429, headers: { "retry-after": "1" } };
        }
        break;
      case "garbage":
        if (n % 10 < 7) {
          if (route === "embeddings") {
            count(phase, "embeddings-garbage");
            return { kind: "raw", status: 200, body: '{"data": "nope"}' };
          }
          const kind = garbageKinds[n % garbageKinds.length] ?? "prose";
          count(phase, kind);
          return garbageReply(kind, request);
        }
        break;
      case "outage":
        count(phase, "503");
        return { kind: "status", status: 503, body: { error: { message: "service unavailable" } } };
      case "healthy":
        break;
    }
    count(phase, "ok");
    return healthy(good);
  }

  const server = await startFakeOpenAiServer({
    chat: (request) => respond("chat", request),
    embeddings: (request) => respond("embeddings", request),
  });
  return {
    url: server.url,
    /** Starts the schedule's clock (at the start of production). */
    begin(): void {
      startedAt = Date.now();
    },
    replies,
    requests: () => server.requests.length,
    close: () => server.close(),
  };
}

/** Counts what the processors' JSON logs say about failures, per message and code. */
export function createLogTally() {
  const tally = {
    inProcessRetries: new Map<string, number>(),
    eventsRetriedInProcess: new Set<string>(),
    heldRetries: new Map<string, number>(),
    eventsHeld: new Set<string>(),
    retryTopic: new Map<string, number>(),
    deadLettered: new Map<string, number>(),
    pauses: 0,
    pausedMsByCode: new Map<string, number>(),
    circuitOpened: 0,
    circuitClosedAfterMs: [] as number[],
    processed: 0,
  };
  const bump = (map: Map<string, number>, key: string, by = 1) => map.set(key, (map.get(key) ?? 0) + by);
  let partial = "";

  function line(text: string): void {
    if (!text.startsWith("{")) return;
    let entry: {
      msg?: string;
      code?: string;
      pausedMs?: number;
      openForMs?: number;
      topic?: string;
      partition?: number;
      offset?: string;
      err?: { code?: string };
    };
    try {
      entry = JSON.parse(text) as typeof entry;
    } catch {
      return;
    }
    const where = `${entry.topic ?? ""}/${String(entry.partition ?? "")}/${entry.offset ?? ""}`;
    const code = entry.code ?? entry.err?.code ?? "TRANSPORT";
    switch (entry.msg) {
      case "processing failed; retrying":
        bump(tally.inProcessRetries, code);
        tally.eventsRetriedInProcess.add(where);
        break;
      case "dependency unavailable; holding the event":
        bump(tally.heldRetries, code);
        tally.eventsHeld.add(where);
        break;
      case "event handed to the retry topic":
        bump(tally.retryTopic, code);
        break;
      case "event dead-lettered":
        bump(tally.deadLettered, code);
        break;
      case "dependency outage: pausing consumption":
        tally.pauses += 1;
        break;
      case "dependency back: resuming consumption":
        bump(tally.pausedMsByCode, code, entry.pausedMs ?? 0);
        break;
      case "llm circuit opened":
        tally.circuitOpened += 1;
        break;
      case "llm circuit closed":
        tally.circuitClosedAfterMs.push(entry.openForMs ?? 0);
        break;
      case "event processed":
        tally.processed += 1;
        break;
    }
  }

  return {
    tally,
    /** Feed raw stdout chunks; lines may be split across chunks. */
    feed(chunk: Buffer): void {
      const text = partial + chunk.toString("utf8");
      const lines = text.split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines) line(l);
    },
    /** A process died: its half-written last line is garbage. */
    reset(): void {
      partial = "";
    },
  };
}

export type LogTally = ReturnType<typeof createLogTally>["tally"];

const fmt = (map: Map<string, number>) =>
  map.size === 0
    ? "none"
    : [...map]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${String(v)}`)
        .join(", ");

export function printLlmTally(tally: LogTally, replies: Map<string, number>, requests: number): void {
  console.log(`  LLM server: ${String(requests)} requests; replies by phase: ${fmt(replies)}`);
  console.log(
    `  retried in process:  ${String(tally.eventsRetriedInProcess.size)} events, ${String([...tally.inProcessRetries.values()].reduce((a, b) => a + b, 0))} retries (${fmt(tally.inProcessRetries)})`,
  );
  console.log(
    `  held during outages: ${String(tally.eventsHeld.size)} events, ${String([...tally.heldRetries.values()].reduce((a, b) => a + b, 0))} held retries (${fmt(tally.heldRetries)})`,
  );
  console.log(`  to the retry topic:  ${fmt(tally.retryTopic)}`);
  console.log(`  dead-lettered:       ${fmt(tally.deadLettered)}`);
  const pausedMs = [...tally.pausedMsByCode.values()].reduce((a, b) => a + b, 0);
  console.log(
    `  consumption paused:  ${String(tally.pauses)} times, ${(pausedMs / 1000).toFixed(1)} s until resumed (by the code that paused it: ${fmt(tally.pausedMsByCode)})`,
  );
  const closed = tally.circuitClosedAfterMs;
  const openMs = closed.reduce((a, b) => a + b, 0);
  const longest = closed.reduce((a, b) => Math.max(a, b), 0);
  console.log(
    `  llm circuit:         opened ${String(tally.circuitOpened)} times (re-opens after a failed probe included), closed ${String(closed.length)} times; open ${(openMs / 1000).toFixed(1)} s in total, longest ${(longest / 1000).toFixed(1)} s, ${String(closed.filter((ms) => ms < 500).length)} closed within 0.5 s by a request already in flight`,
  );
}
