import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  context,
  type Attributes,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from "@opentelemetry/api";
import type { IHeaders, TopicMessages } from "kafkajs";
import { errorText } from "../../observability/traced-stage-timer.js";
import type { Done, EventRunner, Work } from "./event-runner.js";
import { Abandoned } from "./wakeup.js";

const headerGetter: TextMapGetter<IHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    const first = Array.isArray(value) ? value[0] : value;
    return first === undefined ? undefined : first.toString();
  },
};

const headerSetter: TextMapSetter<IHeaders> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

export interface TracedRunnerOptions {
  groupId: string;
  deadLetterTopic: string;
  retryTopic: string;
}

/** What a run ended in, from the topics of what it commits. */
function resultOf(messages: TopicMessages[], options: TracedRunnerOptions): string {
  const topics = messages.map((m) => m.topic);
  if (topics.includes(options.deadLetterTopic)) return "dead_lettered";
  if (topics.includes(options.retryTopic)) return "retry_topic";
  return "processed";
}

function consumeAttributes(work: Work, options: TracedRunnerOptions): Attributes {
  const attributes: Attributes = {
    "messaging.system": "kafka",
    "messaging.operation.type": "process",
    "messaging.destination.name": work.topic,
    "messaging.destination.partition.id": String(work.partition),
    "messaging.kafka.offset": Number(work.message.offset),
    "messaging.consumer.group.name": options.groupId,
  };
  const event = work.event;
  if (event) {
    attributes["reflector.tenant_id"] = event.tenantId;
    attributes["reflector.loop_id"] = event.loopId;
    attributes["reflector.event_id"] = event.eventId;
  }
  // `tenant NUL signature`, as the consumer's single-flight gate keys it.
  const signature = work.signature?.split("\u0000")[1];
  if (signature) attributes["reflector.signature"] = signature;
  return attributes;
}

/**
 * The event runner with the event's spans around each run. `reflector.consume` continues the W3C
 * `traceparent` the record carries (a new trace when it has none) and is the active span while
 * the event is processed, so the stage spans and the calls they make nest under it.
 * `reflector.publish` runs from the outputs being ready until the Kafka transaction that carries
 * them (with the consumed offset) has committed; its context replaces the `traceparent` of every
 * record the run produces, so downstream consumers continue from Reflector's span, in the same
 * trace. Used only when tracing is on.
 */
export function traceRuns(runner: EventRunner, tracer: Tracer, options: TracedRunnerOptions): EventRunner {
  async function run(work: Work, signal: AbortSignal): Promise<Done> {
    const parent = propagation.extract(ROOT_CONTEXT, work.message.headers ?? {}, headerGetter);
    const span = tracer.startSpan(
      "reflector.consume",
      { kind: SpanKind.CONSUMER, attributes: consumeAttributes(work, options) },
      parent,
    );
    const active = trace.setSpan(parent, span);
    try {
      const done = await context.with(active, () => runner.run(work, signal));
      const count = done.messages.reduce((n, m) => n + m.messages.length, 0);
      span.setAttribute("reflector.result", resultOf(done.messages, options));
      const publish = tracer.startSpan(
        "reflector.publish",
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            "messaging.system": "kafka",
            "messaging.operation.type": "send",
            "messaging.batch.message_count": count,
          },
        },
        active,
      );
      const published = trace.setSpan(active, publish);
      for (const topicMessages of done.messages) {
        for (const message of topicMessages.messages) {
          const headers: IHeaders = { ...message.headers };
          propagation.inject(published, headers, headerSetter);
          message.headers = headers;
        }
      }
      return {
        messages: done.messages,
        afterCommit: () => {
          publish.end();
          done.afterCommit();
        },
      };
    } catch (err) {
      if (err instanceof Abandoned) {
        span.setAttribute("reflector.result", "abandoned");
      } else {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorText(err) });
      }
      throw err;
    } finally {
      span.end();
    }
  }
  return { run, decode: runner.decode, prepare: runner.prepare, defer: runner.defer };
}
