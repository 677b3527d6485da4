/**
 * Fuzz run of the OTLP bridge and of `dlq replay` under TENANT_TOPIC_BINDING (bounded, not part of
 * `npm test`): two tenants, each with its own OTLP topic, bridge and bound task topic. Each tenant
 * sends valid traces (some with the other tenant's trace ids) and a hostile producer's records: a
 * resource naming the other tenant, a `__proto__` attribute smuggling it, the tenant attribute
 * twice, garbage bytes, a trace past the span cap, a trace of CJK text past the record limit, a
 * trace that keeps sending new roots. Then dead letters that name the other tenant's topic are
 * replayed. The accounting: every valid trace published exactly once, as its own tenant's, on its
 * own tenant's topic; every hostile record where it belongs; nothing replayed across tenants.
 *
 *   npx tsx bench/chaos-otlp.ts        (or scripts/chaos.sh --otlp)
 * Env: CHAOS_OTLP_TRACES (200 per tenant), KAFKA_BROKERS, BENCH_DATABASE_URL (migrated first).
 */
import { randomBytes } from "node:crypto";
import { Partitioners, type IHeaders } from "kafkajs";
import { ensureTopics } from "../src/adapters/kafka/topics.js";
import { loadConfig } from "../src/config/config.js";
import { tenantOfTopic } from "../src/domain/tenant-topic-binding.js";
import { createLogger } from "../src/observability/logger.js";
import { replayDeadLetters } from "../src/adapters/kafka/admin/dlq-replay.js";
import { createOtlpBridgeApp } from "../src/composition/otlp-bridge-app.js";
import { benchSetup, deleteTopics, silentLogger } from "./support.js";

const tracesPerTenant = Number(process.env.CHAOS_OTLP_TRACES ?? 200);
const deadlineMs = Number(process.env.CHAOS_DEADLINE_MS ?? 180_000);
const log = (message: string) => {
  console.log(`[chaos-otlp ${new Date().toISOString().slice(11, 19)}] ${message}`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- OTLP/JSON records, written by hand so that a hostile producer's shapes can be too ----
interface Attribute {
  key: string;
  value: unknown;
}
const text = (key: string, value: string): Attribute => ({ key, value: { stringValue: value } });
const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const nanos = (ms: number) =>
  (BigInt(Date.UTC(2026, 10, 26)) * 1_000_000n + BigInt(ms) * 1_000_000n).toString();

interface SpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attribute[];
  status: { code: number; message?: string };
}

function failingRun(traceId: string, conversation: string, input = "Which customers churned?"): SpanJson[] {
  const root = hex(8);
  return [
    {
      traceId,
      spanId: root,
      name: "invoke_agent orchestrator",
      startTimeUnixNano: nanos(0),
      endTimeUnixNano: nanos(50),
      attributes: [
        text("gen_ai.operation.name", "invoke_agent"),
        text("gen_ai.agent.name", "orchestrator"),
        text("gen_ai.conversation.id", conversation),
        text(
          "gen_ai.input.messages",
          JSON.stringify([{ role: "user", parts: [{ type: "text", content: input }] }]),
        ),
      ],
      status: { code: 2, message: "could not answer" },
    },
    {
      traceId,
      spanId: hex(8),
      parentSpanId: root,
      name: "execute_tool postgres_query",
      startTimeUnixNano: nanos(10),
      endTimeUnixNano: nanos(40),
      attributes: [
        text("gen_ai.operation.name", "execute_tool"),
        text("gen_ai.tool.name", "postgres_query"),
        text("error.type", "query_timeout"),
      ],
      status: { code: 2, message: "Query execution exceeded 30s limit" },
    },
  ];
}

function record(resource: Attribute[], spans: SpanJson[]): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ spans }] }] });
}

async function main(): Promise<boolean> {
  const setup = await benchSetup("chaos-otlp", 3);
  const t = setup.config.topics;
  const tenants = ["acme", "globex"].map((name) => `${name}-${setup.id}`) as [string, string];
  const otlpTopic = (i: number) => `bench.${setup.id}.otlp-${String(i)}`;
  const taskTopic = (i: number) => `bench.${setup.id}.tasks-${String(i)}`;
  const binding = tenants.map((tenant, i) => `${tenant}=${taskTopic(i)}`).join(",");
  await ensureTopics(setup.kafka, {
    names: [otlpTopic(0), otlpTopic(1), taskTopic(0), taskTopic(1)],
    partitions: 3,
    replicationFactor: 1,
  });

  // What comes out: task events on the tenants' topics and dead letters, as a reader sees them.
  const published: { topic: string; ceId: string; tenantId: string; bytes: number }[] = [];
  const dead: { key: string; code: string; topic: string; headers: IHeaders }[] = [];
  const reader = setup.kafka.consumer({ groupId: `${setup.id}.reader` });
  await reader.connect();
  await reader.subscribe({ topics: [taskTopic(0), taskTopic(1), t.deadLetter], fromBeginning: true });
  await reader.run({
    eachMessage: ({ topic, message }) => {
      const header = (name: string) => message.headers?.[name]?.toString() ?? "";
      if (topic === t.deadLetter) {
        dead.push({
          key: message.key?.toString() ?? "",
          code: header("reflector.error.code"),
          topic: header("reflector.original.topic"),
          headers: message.headers ?? {},
        });
      } else {
        const event = JSON.parse(message.value?.toString() ?? "{}") as { tenantId?: string };
        published.push({
          topic,
          ceId: header("ce_id"),
          tenantId: event.tenantId ?? "",
          bytes: message.value?.length ?? 0,
        });
      }
      return Promise.resolve();
    },
  });

  const bridges = tenants.map((_tenant, i) =>
    createOtlpBridgeApp(
      loadConfig({
        ...setup.env,
        TENANT_TOPIC_BINDING: binding,
        OTLP_TOPIC: otlpTopic(i),
        OTLP_GROUP_ID: `${setup.id}.otlp-${String(i)}`,
        OTLP_TASK_TOPIC: taskTopic(i),
        OTLP_TRACE_GRACE_MS: "1000",
        OTLP_TRACE_TIMEOUT_MS: "6000",
        OTLP_SWEEP_INTERVAL_MS: "50",
        OTLP_MAX_SPANS_PER_TRACE: "300",
      }),
      silentLogger,
    ),
  );
  for (const bridge of bridges) await bridge.start();

  const producer = setup.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const send = (topic: string, messages: { key: string; value: string | Buffer }[]) =>
    producer.send({ topic, messages });

  // Valid traces; every fifth acme trace id is also one of globex's traces.
  const valid: { tenant: number; traceId: string }[] = [];
  for (let i = 0; i < tracesPerTenant; i += 1) {
    const acmeId = hex(16);
    const globexId = i % 5 === 0 ? acmeId : hex(16);
    for (const [tenant, traceId] of [
      [0, acmeId],
      [1, globexId],
    ] as const) {
      valid.push({ tenant, traceId });
      const spans = failingRun(traceId, `conv-${setup.id}-${String(tenant)}-${String(i)}`);
      await send(otlpTopic(tenant), [
        {
          key: traceId,
          value: record(
            [text("reflector.tenant_id", tenants[tenant]), text("service.name", "agents")],
            spans,
          ),
        },
      ]);
    }
  }
  log(`sent ${String(valid.length)} valid traces`);

  // The hostile producer, on acme's topic. Each record is keyed `hostile-<kind>`.
  const hostile: Record<string, { traceId: string }> = {};
  const hostileTrace = (kind: string) => (hostile[kind] = { traceId: hex(16) }).traceId;
  const globex = tenants[1];
  await send(otlpTopic(0), [
    {
      key: "hostile-names-globex",
      value: record(
        [text("reflector.tenant_id", globex)],
        failingRun(hostileTrace("names-globex"), `h1-${setup.id}`),
      ),
    },
    {
      key: "hostile-proto",
      value: record(
        [{ key: "__proto__", value: { kvlistValue: { values: [text("reflector.tenant_id", globex)] } } }],
        failingRun(hostileTrace("proto"), `h2-${setup.id}`),
      ),
    },
    {
      key: "hostile-twice",
      value: record(
        [text("reflector.tenant_id", tenants[0]), text("reflector.tenant_id", globex)],
        failingRun(hostileTrace("twice"), `h3-${setup.id}`),
      ),
    },
    { key: "hostile-garbage", value: randomBytes(300) },
    {
      key: "hostile-cjk",
      value: record(
        [text("reflector.tenant_id", tenants[0])],
        failingRun(hostileTrace("cjk"), `h4-${setup.id}`, "顧客データの分析結果".repeat(25_000)),
      ),
    },
  ]);
  // Past the span cap: a root and 400 children, in 4 records.
  const bigId = hostileTrace("oversized");
  const [bigRoot] = failingRun(bigId, `h5-${setup.id}`);
  const [, template] = failingRun(bigId, "x");
  if (!bigRoot || !template) throw new Error("a run has a root and a tool call");
  const children = Array.from({ length: 400 }, (_, i) => ({
    ...template,
    spanId: hex(8),
    parentSpanId: bigRoot.spanId,
    startTimeUnixNano: nanos(1 + i),
  }));
  for (let i = 0; i < 4; i += 1) {
    await send(otlpTopic(0), [
      {
        key: "hostile-oversized",
        value: record(
          [text("reflector.tenant_id", tenants[0])],
          [...(i === 0 ? [bigRoot] : []), ...children.slice(i * 100, i * 100 + 100)],
        ),
      },
    ]);
  }
  // A new parentless span every 300 ms for 9 s (grace 1 s, timeout 6 s): published by its age.
  const endlessId = hostileTrace("endless");
  for (let i = 0; i < 30; i += 1) {
    const [root] = failingRun(endlessId, `h6-${setup.id}`);
    if (root)
      await send(otlpTopic(0), [
        { key: "hostile-endless", value: record([text("reflector.tenant_id", tenants[0])], [root]) },
      ]);
    await sleep(300);
  }
  log("sent the hostile records");

  // Wait for every valid trace and the traces that should be published.
  const expectedPublished = valid.length + 3; // proto (as acme), cjk, endless
  const started = Date.now();
  while (published.length < expectedPublished && Date.now() - started < deadlineMs) await sleep(500);
  await sleep(3_000);

  // Dead letters that name the other tenant's topic (forged, or from before origins were checked).
  await send(t.deadLetter, [
    {
      key: "forged-0",
      value: JSON.stringify({ schemaVersion: 1, tenantId: tenants[0], eventId: "forged-0" }),
    },
  ]);
  await producer.send({
    topic: t.deadLetter,
    messages: [
      {
        key: "forged-1",
        value: JSON.stringify({ schemaVersion: 1, tenantId: tenants[0], eventId: "forged-1" }),
        headers: { "reflector.error.code": "SCHEMA_INVALID", "reflector.original.topic": taskTopic(1) },
      },
      {
        key: "forged-2",
        value: JSON.stringify({ schemaVersion: 1, tenantId: tenants[0], eventId: "forged-2" }),
        headers: {
          "reflector.error.code": "TENANT_TOPIC_MISMATCH",
          "reflector.original.topic": taskTopic(1),
        },
      },
    ],
  });
  const parsedBinding = loadConfig({ ...setup.env, TENANT_TOPIC_BINDING: binding }).tenancy.binding ?? [];
  const replay = await replayDeadLetters({
    kafka: setup.kafka,
    deadLetterTopic: t.deadLetter,
    targetTopic: t.taskCompleted,
    sourceTopics: [t.taskCompleted, t.retry],
    tenancy: {
      binding: parsedBinding,
      decode: (value) => Promise.resolve(JSON.parse(value.toString()) as unknown),
    },
    groupId: `${setup.id}.dlq-replay`,
    dryRun: false,
    idleTimeoutMs: 10_000,
    logger: createLogger("silent"),
  });
  await sleep(3_000);

  await producer.disconnect();
  for (const bridge of bridges) await bridge.stop();
  await reader.disconnect();

  // ---- accounting ----
  const eventIdOf = (traceId: string) => `otlp-${traceId}`;
  const on = (tenant: number, traceId: string) =>
    published.filter((p) => p.topic === taskTopic(tenant) && p.ceId === eventIdOf(traceId));
  let lost = 0;
  let duplicated = 0;
  for (const trace of valid) {
    const copies = on(trace.tenant, trace.traceId).length;
    if (copies === 0) lost += 1;
    if (copies > 1) duplicated += 1;
  }
  const crossed = published.filter((p) => tenantOfTopic(parsedBinding, p.topic) !== p.tenantId).length;
  const deadFor = (key: string) => dead.filter((d) => d.key === key).map((d) => d.code);
  const pubOf = (kind: string) => on(0, hostile[kind]?.traceId ?? "");
  const hostileChecks: [string, boolean, string][] = [
    [
      "a resource naming the other tenant",
      deadFor("hostile-names-globex").includes("TENANT_TOPIC_MISMATCH") && pubOf("names-globex").length === 0,
      deadFor("hostile-names-globex").join(","),
    ],
    [
      "a __proto__ attribute smuggling it",
      pubOf("proto").length === 1 && pubOf("proto")[0]?.tenantId === tenants[0],
      `${String(pubOf("proto").length)} published`,
    ],
    [
      "the tenant attribute twice",
      deadFor("hostile-twice").includes("SCHEMA_INVALID") && pubOf("twice").length === 0,
      deadFor("hostile-twice").join(","),
    ],
    ["garbage bytes", deadFor("hostile-garbage").length === 1, deadFor("hostile-garbage").join(",")],
    [
      "CJK text past the record limit",
      pubOf("cjk").length === 1 && (pubOf("cjk")[0]?.bytes ?? 0) < 1_000_000,
      `${String(pubOf("cjk")[0]?.bytes ?? 0)} bytes`,
    ],
    ["past the span cap", pubOf("oversized").length === 0, `${String(pubOf("oversized").length)} published`],
    ["new roots for ever", pubOf("endless").length === 1, `${String(pubOf("endless").length)} published`],
  ];
  const replayedAcross = published.filter((p) => p.ceId === "" && p.topic === taskTopic(1)).length;
  const forgedReplayed = replay.items.filter(
    (i) => i.key?.startsWith("forged-") && i.action === "replayed",
  ).length;

  console.log("\nOTLP and replay fuzz accounting");
  console.log(
    `  valid traces       ${String(valid.length)} (${String(tracesPerTenant / 5)} trace ids used by both tenants)`,
  );
  console.log(
    `    published once ${String(valid.length - lost - duplicated)}   lost ${String(lost)}   duplicated ${String(duplicated)}   crossed tenants ${String(crossed)}`,
  );
  console.log("  hostile records");
  for (const [what, ok, detail] of hostileChecks)
    console.log(`    ${ok ? "ok  " : "FAIL"} ${what} (${detail})`);
  console.log(
    `  dlq replay         ${String(replay.replayed)} replayed, ${String(replay.skipped)} skipped; forged letters replayed ${String(forgedReplayed)}; events replayed onto another tenant's topic ${String(replayedAcross)}`,
  );
  const ok =
    lost === 0 &&
    duplicated === 0 &&
    crossed === 0 &&
    hostileChecks.every(([, pass]) => pass) &&
    forgedReplayed === 0 &&
    replayedAcross === 0;
  console.log(ok ? "  RESULT: 0 lost, 0 duplicated, 0 crossed tenants" : "  RESULT: FAILED");
  await deleteTopics(setup);
  return ok;
}

main().then(
  (ok) => {
    process.exit(ok ? 0 : 1);
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
