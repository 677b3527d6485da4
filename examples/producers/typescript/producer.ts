/**
 * An agent's side of Reflector, in TypeScript with kafkajs: publish one `agent.task.completed`
 * event (checked against the JSON Schema in schemas/ first) and wait for the `loop.decision`
 * Reflector publishes for it.
 *
 *   KAFKA_BROKERS=127.0.0.1:9092 npx tsx examples/producers/typescript/producer.ts
 *
 * Settings (environment): KAFKA_BROKERS, TOPIC_TASK_COMPLETED (agent.task.completed),
 * TOPIC_LOOP_DECISION (loop.decision), TENANT_ID (example-tenant), TIMEOUT_MS (60000).
 * Prints the decision as JSON on stdout; exits 1 when the event is invalid or no decision comes.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import formats from "ajv-formats";
import { Kafka, logLevel } from "kafkajs";

const env = process.env;
const brokers = (env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",");
const inputTopic = env.TOPIC_TASK_COMPLETED ?? "agent.task.completed";
const decisionTopic = env.TOPIC_LOOP_DECISION ?? "loop.decision";
const tenantId = env.TENANT_ID ?? "example-tenant";
const timeoutMs = Number(env.TIMEOUT_MS ?? 60_000);

// The contract: the JSON Schemas Reflector publishes (schemas/, also written by `npm run schemas`).
const ajv = new Ajv({ allErrors: true });
formats.default(ajv);
function contract(name: string): ValidateFunction {
  const url = new URL(`../../../schemas/${name}.json`, import.meta.url);
  return ajv.compile(JSON.parse(readFileSync(url, "utf8")) as object);
}
const validTask = contract("task-completed.v1");
const validDecision = contract("loop-decision.v1");

/** One finished task: here a database query that timed out, the kind of failure Reflector learns from. */
function taskCompleted() {
  const id = randomUUID();
  const now = new Date();
  const at = (msBefore: number) => new Date(now.getTime() - msBefore).toISOString();
  return {
    schemaVersion: 1,
    eventId: `evt-${id}`,
    tenantId,
    projectId: "orders",
    agentId: "order-analyst",
    taskId: `task-${id}`,
    // Reflector keys its outputs by loopId: a rerun it asks for gets a new one (`newLoopId`).
    loopId: `loop-${id}`,
    occurredAt: now.toISOString(),
    task: { description: "Fetch a customer's order history", goal: "List every order of customer 4411" },
    outcome: "timeout",
    error: {
      category: "timeout_error",
      type: "query_timeout",
      code: "QUERY_TIMEOUT",
      message: "Query execution exceeded 30s limit",
    },
    events: [
      {
        eventId: "e1",
        type: "tool_call",
        timestamp: at(30_000),
        toolName: "postgres_query",
        actor: "order-analyst",
        content: "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.id = 4411",
        metadata: { timeout_ms: 30000 },
      },
      {
        eventId: "e2",
        type: "error_event",
        timestamp: at(0),
        toolName: "postgres_query",
        actor: "order-analyst",
        content: "Query timeout after 30 seconds",
        error: { message: "canceling statement due to statement timeout", code: "QUERY_TIMEOUT" },
      },
    ],
  };
}

/** A value as Reflector writes it: JSON, or with a schema registry the Confluent wire format (0, 4-byte id, JSON). */
function decode(value: Buffer): unknown {
  return JSON.parse((value[0] === 0 ? value.subarray(5) : value).toString("utf8"));
}

async function main(): Promise<number> {
  const event = taskCompleted();
  if (!validTask(event)) {
    console.error(`invalid event: ${ajv.errorsText(validTask.errors)}`);
    return 1;
  }
  const kafka = new Kafka({ clientId: "example-producer", brokers, logLevel: logLevel.WARN });
  const producer = kafka.producer({ idempotent: true });
  // Reflector commits its outputs in Kafka transactions: read only committed ones.
  const consumer = kafka.consumer({ groupId: `example-producer-${randomUUID()}`, readUncommitted: false });

  let settle: (decision: unknown) => void = () => undefined;
  const decided = new Promise<unknown>((resolve) => (settle = resolve));
  await consumer.connect();
  // Joined before the event goes out, so the decision cannot be published before we read.
  const joined = new Promise<void>((resolve) => {
    consumer.on(consumer.events.GROUP_JOIN, () => {
      resolve();
    });
  });
  await consumer.subscribe({ topic: decisionTopic, fromBeginning: false });
  await consumer.run({
    eachMessage: ({ message }) => {
      const decision = message.value ? (decode(message.value) as { sourceEventId?: string }) : null;
      if (decision?.sourceEventId === event.eventId) settle(decision);
      return Promise.resolve();
    },
  });
  await joined;

  await producer.connect();
  // Key = loopId keeps one loop's events in order. `traceparent` (W3C) ties Reflector's work to
  // the agent's own trace when the agent is traced.
  await producer.send({
    topic: inputTopic,
    messages: [{ key: event.loopId, value: JSON.stringify(event) }],
  });
  console.error(
    `published ${event.eventId} (loop ${event.loopId}) to ${inputTopic}; waiting for its decision`,
  );

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      resolve(null);
    }, timeoutMs);
  });
  const decision = await Promise.race([decided, timeout]);
  clearTimeout(timer);
  await Promise.all([producer.disconnect(), consumer.disconnect()]);
  if (decision === null) {
    console.error(`no loop.decision for ${event.eventId} within ${String(timeoutMs)} ms`);
    return 1;
  }
  if (!validDecision(decision)) {
    console.error(`the decision does not match loop-decision.v1: ${ajv.errorsText(validDecision.errors)}`);
    return 1;
  }
  // `rerun` (run the loop again as `newLoopId`), `finalize` or `halt`, with the reason.
  console.log(JSON.stringify(decision, null, 2));
  return 0;
}

process.exitCode = await main();
