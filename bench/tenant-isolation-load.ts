import { parentPort, workerData } from "node:worker_threads";
import { runMultiAgentTask, sdkTracer, serialize } from "../test/support/otel-traces.js";

/**
 * Tenant A's load for bench/tenant-isolation.ts, on a thread of its own so that building and
 * sending it does not run on the event loop of the Reflector under test (as a client elsewhere):
 * OTLP/HTTP requests of 500 spans (100 new traces each, built before the run) and lesson checks,
 * each sender posting as fast as it is answered until told to stop; answers counted by status.
 */
interface LoadSettings {
  baseUrl: string;
  key: string;
  otlpSenders: number;
  checkSenders: number;
  otlpBodies: number;
}

const settings = workerData as LoadSettings;
const port = parentPort;
if (!port) throw new Error("tenant-isolation-load runs as a worker thread");

const bodies = Array.from({ length: settings.otlpBodies }, (_, n) => {
  const sdk = sdkTracer({ "service.name": `iso-agents-${String(n)}` });
  const start = Date.now();
  for (let i = 0; i < 100; i += 1) runMultiAgentTask(sdk.tracer, { startMs: start + i * 100 });
  return serialize(sdk.finished(), "protobuf");
});
const check = JSON.stringify({
  task: "Fetch customer order history",
  goal: "Retrieve all orders for customer analysis",
  limit: 5,
  // A low floor of the caller's own: every check has lessons to ask the model about.
  minRelevance: 0.05,
});

let running = true;
const answered: Record<string, number> = {};
const count = (what: string) => {
  answered[what] = (answered[what] ?? 0) + 1;
};

async function post(path: string, body: Buffer | string, contentType: string): Promise<number> {
  const res = await fetch(`${settings.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${settings.key}`, "content-type": contentType },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

let next = 0;
async function run(): Promise<void> {
  const loops = [
    ...Array.from({ length: settings.otlpSenders }, async () => {
      while (running) {
        // Past the bodies built, the first ones again: their traces are no longer new.
        const body = bodies[next % bodies.length] ?? Buffer.alloc(0);
        next += 1;
        count(`otlp ${String(await post("/v1/traces", body, "application/x-protobuf"))}`);
      }
    }),
    ...Array.from({ length: settings.checkSenders }, async () => {
      while (running)
        count(`lesson check ${String(await post("/api/v1/lessons/for-task", check, "application/json"))}`);
    }),
  ];
  await Promise.all(loops);
  port?.postMessage({ done: answered });
}

port.on("message", (message: { start?: boolean; stop?: boolean }) => {
  if (message.start) void run();
  if (message.stop) running = false;
});
port.postMessage({ ready: true });
