import type { buildProducer } from "../composition/builders.js";
import type { Config } from "../config/config.js";
import type { LoopDecision, ReflectionOutcome, TaskCompleted } from "../domain/contracts/index.js";
import { selectForReflection } from "../domain/select-for-reflection.js";
import type { ValueCodec } from "../pipeline/ports.js";
import type { Row } from "./demo-report.js";
import type { Example } from "./demo-setup.js";

/**
 * The demo's passes: the examples published as a tenant, and the viewer that reads what the
 * processors publish back (and publishes a rerun chain's next event when its decision comes).
 */

/** A Kafka message's headers as the client hands them over. */
type Headers = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

function headerString(headers: Headers | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return (Array.isArray(value) ? value[0] : value)?.toString();
}

/** One run of the examples through a processor, as one tenant. */
export interface Pass {
  tenantId: string;
  /** Appended to event and loop ids, so every run of the demo is new to Reflector. */
  suffix: string;
  /** The input topic of the pass's processor. */
  topic: string;
  rows: Map<string, Row>;
  /** A rerun chain's next loop id → its example and the step it is at. */
  chainOf: Map<string, { example: Example; step: number }>;
}

export interface DeadLetterRow {
  example: string;
  offset: string;
  code: string;
  reason: string;
  seen: boolean;
}

/** What the demo's publishing and its viewer of the outputs share. */
export interface Demo {
  config: Config;
  codec: ValueCodec;
  producer: ReturnType<typeof buildProducer>;
  examples: Example[];
  passes: Map<string, Pass>;
  deadLetters: DeadLetterRow[];
  /** Outputs published a second time for an event (a replay must publish none). */
  replayed: number;
}

function personalise(
  pass: Pass,
  event: TaskCompleted,
  loopId: string,
  rerunOf: string | undefined,
): TaskCompleted {
  return {
    ...event,
    eventId: `${event.eventId}-${pass.suffix}`,
    tenantId: pass.tenantId,
    loopId,
    ...(rerunOf ? { rerunOf } : {}),
  };
}

async function publish(demo: Demo, pass: Pass, example: Example, step: number, event: TaskCompleted) {
  pass.rows.set(event.eventId, {
    order: demo.examples.indexOf(example) * 100 + step,
    example: example.name,
    step,
    event,
    expectsOutcome: selectForReflection(event, demo.config.mode).reflect,
  });
  const value = await demo.codec.encode(pass.topic, "task-completed.v1", event);
  await demo.producer.send({
    topic: pass.topic,
    messages: [{ key: event.loopId, value, headers: { ce_id: event.eventId } }],
  });
}

/** Publishes the examples as a new tenant; the viewer publishes each rerun when its decision comes. */
export async function publishPass(
  demo: Demo,
  tenantId: string,
  suffix: string,
  topic: string,
  chosen: Example[],
) {
  const pass: Pass = { tenantId, suffix, topic, rows: new Map(), chainOf: new Map() };
  demo.passes.set(tenantId, pass);
  for (const example of chosen) {
    if (example.raw !== undefined) {
      const [meta] = await demo.producer.send({
        topic,
        messages: [{ key: "malformed", value: example.raw }],
      });
      demo.deadLetters.push({
        example: example.name,
        offset: meta?.baseOffset ?? "?",
        code: "",
        reason: "",
        seen: false,
      });
      continue;
    }
    const first = example.events?.[0];
    if (!first) continue;
    const loopId = `${first.loopId}-${suffix}`;
    pass.chainOf.set(loopId, { example, step: 0 });
    await publish(demo, pass, example, 0, personalise(pass, first, loopId, undefined));
  }
  return pass;
}

/** One output seen by the viewer: a dead letter, an outcome, or a decision (a rerun's next event is published). */
export async function onOutput(
  demo: Demo,
  topic: string,
  message: { headers?: Headers; value: Buffer | null },
) {
  const t = demo.config.topics;
  if (topic === t.deadLetter) {
    const offset = headerString(message.headers, "reflector.original.offset");
    const dead = demo.deadLetters.find((d) => d.offset === offset);
    if (dead) {
      dead.seen = true;
      dead.code = headerString(message.headers, "reflector.error.code") ?? "?";
      dead.reason = headerString(message.headers, "reflector.error.message") ?? "?";
    }
    return;
  }
  if (!message.value) return;
  const value = (await demo.codec.decode(message.value)) as { tenantId?: string; sourceEventId?: string };
  const pass = value.tenantId ? demo.passes.get(value.tenantId) : undefined;
  const row = value.sourceEventId ? pass?.rows.get(value.sourceEventId) : undefined;
  if (!pass || !row) return;
  if (topic !== t.loopDecision) {
    row.outcome = value as ReflectionOutcome;
    return;
  }
  const decision = value as LoopDecision;
  if (row.decision) {
    demo.replayed += 1;
    return;
  }
  row.decision = decision;
  const chain = pass.chainOf.get(decision.loopId);
  const next = chain?.example.events?.[chain.step + 1];
  if (chain && next && decision.decision === "rerun" && decision.newLoopId) {
    pass.chainOf.set(decision.newLoopId, { example: chain.example, step: chain.step + 1 });
    await publish(
      demo,
      pass,
      chain.example,
      chain.step + 1,
      personalise(pass, next, decision.newLoopId, decision.loopId),
    );
  }
}
