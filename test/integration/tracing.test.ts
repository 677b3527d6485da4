import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv } from "../support/cli-env.js";
import { helpfulModel, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * `reflector start` as a process, with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a small OTLP/HTTP
 * receiver started here: Reflector's spans and those of the instrumented libraries (Postgres,
 * Redis, the LLM's HTTP call) arrive over OTLP in the agent's trace, flushed when the process stops.
 */

const cli = fileURLToPath(new URL("../support/run-cli.ts", import.meta.url));
const root = fileURLToPath(new URL("../../", import.meta.url));
const traceId = "5bf92f3577b34da6a3ce929d0e0e4736";
const parentSpanId = "10f067aa0ba902b7";
const traceparent = `00-${traceId}-${parentSpanId}-01`;

interface Received {
  path: string;
  contentType: string;
  body: Buffer;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: OtlpValue }[];
}
interface OtlpRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[];
  }[];
}

async function startReceiver() {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const contentType = req.headers["content-type"] ?? "";
      received.push({ path: req.url ?? "", contentType, body: Buffer.concat(chunks) });
      if (contentType.includes("json")) res.writeHead(200, { "content-type": "application/json" }).end("{}");
      else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}

let h: Harness;
let fake: FakeOpenAiServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  h = await startHarness({ startApp: false });
  fake = await startFakeOpenAiServer({ chat: helpfulModel });
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver.close();
  await fake.close();
  await h.close();
});

/** Runs `reflector start` until one event's outputs are out, then stops it with SIGTERM. */
async function runProcessorFor(
  env: Record<string, string>,
  eventId: string,
  publish: () => Promise<unknown>,
) {
  const child = spawn(process.execPath, ["--import", "tsx", cli, "start"], {
    cwd: root,
    env: cliEnv(h.config, {
      LOG_LEVEL: "info",
      REFLECTOR_EMBEDDINGS: "hashing",
      REFLECTOR_GENERATOR: "openai",
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "sk-test-secret-never-exported",
      REFLECTOR_MODEL: "fake-model",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "reflector-under-test",
      ...env,
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  try {
    await waitFor(() => (output.includes("reflector started") ? true : undefined), {
      timeoutMs: 60_000,
      what: `the processor to start:\n${output}`,
    });
    expect(output).toContain("tracing on: exporting spans over OTLP");
    await publish();
    await h.waitForOutputs(eventId, 2);
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited, output).toBe(0);
  return output;
}

const value = (v: OtlpValue | undefined) => v?.stringValue ?? v?.boolValue ?? v?.doubleValue ?? v?.intValue;

describe("Reflector's spans over OTLP/HTTP", () => {
  it("exports the event's span tree (with Postgres, Redis and the LLM's HTTP call) as OTLP JSON, in the agent's trace", async () => {
    const event = taskEvent({ tenantId: `trace-${h.id}` });
    const output = await runProcessorFor({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, event.eventId, () =>
      h.publish(event, { traceparent }),
    );
    const requests = receiver.received.filter((r) => r.contentType.includes("json"));
    expect(requests.length, output).toBeGreaterThan(0);
    expect(requests.every((r) => r.path === "/v1/traces")).toBe(true);
    const bodies = requests.map((r) => JSON.parse(r.body.toString()) as OtlpRequest);
    const resources = bodies.flatMap((b) => b.resourceSpans);
    expect(
      resources.every((r) =>
        r.resource.attributes.some(
          (a) => a.key === "service.name" && value(a.value) === "reflector-under-test",
        ),
      ),
    ).toBe(true);
    const spans = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const ours = spans.filter((s) => s.traceId === traceId);
    const byId = new Map(ours.map((s) => [s.spanId, s]));
    const path = (s: OtlpSpan): string[] => {
      const parent = byId.get(s.parentSpanId ?? "");
      return parent ? [...path(parent), s.name] : [s.name];
    };
    const consume = ours.find((s) => s.name === "reflector.consume");
    expect(consume, `span names: ${spans.map((s) => s.name).join(", ")}`).toBeDefined();
    expect(consume?.parentSpanId).toBe(parentSpanId);
    const attributes = Object.fromEntries((consume?.attributes ?? []).map((a) => [a.key, value(a.value)]));
    expect(attributes).toMatchObject({
      "reflector.tenant_id": event.tenantId,
      "reflector.loop_id": event.loopId,
      "reflector.event_id": event.eventId,
      "reflector.result": "processed",
    });

    const paths = ours.map((s) => path(s).join(" > "));
    expect(paths).toEqual(
      expect.arrayContaining([
        "reflector.consume > reflector.reflect > reflector.generate",
        "reflector.consume > reflector.reflect > reflector.judge",
        "reflector.consume > reflector.persist",
        "reflector.consume > reflector.publish",
      ]),
    );
    // The maintained instrumentations, nested under the stage that made the call.
    const under = (stage: string) =>
      ours.filter((s) => path(s).includes(`reflector.${stage}`) && !s.name.startsWith("reflector."));
    expect(under("generate").map((s) => s.name)).toContain("POST");
    // The model request is a GenAI client span, the HTTP call its child (docs/operations.md#tracing).
    const chat = ours.find((s) => s.name === "chat fake-model" && path(s).includes("reflector.generate"));
    expect(chat, `span names: ${ours.map((s) => s.name).join(", ")}`).toBeDefined();
    expect(Object.fromEntries((chat?.attributes ?? []).map((a) => [a.key, value(a.value)]))).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "fake-model",
      "gen_ai.response.model": "fake-model",
    });
    expect(ours.some((s) => s.name === "POST" && s.parentSpanId === chat?.spanId)).toBe(true);
    expect(under("persist").some((s) => s.name.startsWith("pg.query"))).toBe(true);
    // The Redis lookups (stage "index", no span of its own) sit right under the event's span.
    const redis = ours.filter((s) => s.name === "mget" || s.name === "evalsha" || s.name === "eval");
    expect(redis.length, `span names: ${ours.map((s) => s.name).join(", ")}`).toBeGreaterThan(0);
    // Nothing from outside an event (probes, start-up) is traced as a root of its own.
    expect(spans.filter((s) => !s.parentSpanId && !s.name.startsWith("reflector."))).toEqual([]);

    // No secret and no prompt text in what was exported.
    const exported = requests.map((r) => r.body.toString()).join("\n");
    expect(exported).not.toContain("sk-test-secret-never-exported");
    expect(exported).not.toContain(event.task.description);
  });

  it("exports OTLP protobuf by default", async () => {
    const before = receiver.received.length;
    const event = taskEvent({ tenantId: `trace-pb-${h.id}` });
    await runProcessorFor({}, event.eventId, () => h.publish(event, { traceparent }));
    const requests = receiver.received.slice(before);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.contentType === "application/x-protobuf")).toBe(true);
    const body = Buffer.concat(requests.map((r) => r.body));
    // Protobuf carries ids as raw bytes and names as UTF-8: the agent's trace id and our spans.
    expect(body.includes(Buffer.from(traceId, "hex"))).toBe(true);
    expect(body.includes(Buffer.from(parentSpanId, "hex"))).toBe(true);
    for (const name of ["reflector.consume", "reflector.persist", "reflector.publish", event.eventId]) {
      expect(body.includes(Buffer.from(name)), name).toBe(true);
    }
  });
});
