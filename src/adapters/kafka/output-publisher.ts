import type { IHeaders, Message, Producer, TopicMessages } from "kafkajs";
import type { ContractName } from "../../domain/contracts/index.js";
import { ReflectorError } from "../../domain/errors.js";
import type { OutboundMessage, OutputRole, ValueCodec } from "../../pipeline/ports.js";
import { cloudEventHeaders } from "./cloud-events.js";

const contractOf: Record<OutputRole, ContractName> = {
  reflectionAccepted: "reflection-outcome.v1",
  reflectionRejected: "reflection-outcome.v1",
  loopDecision: "loop-decision.v1",
};

export interface OutputPublisher {
  /** Encodes the outputs as Kafka messages by topic, for a transaction to send. */
  encode(outputs: OutboundMessage[], inbound: IHeaders | undefined): Promise<TopicMessages[]>;
  /** Encodes and sends outside any transaction (tools and tests). */
  publish(outputs: OutboundMessage[], inbound: IHeaders | undefined): Promise<void>;
}

export function createOutputPublisher(options: {
  producer: Producer;
  codec: ValueCodec;
  topics: Record<OutputRole, string>;
  source: string;
}): OutputPublisher {
  const { producer, codec, topics, source } = options;
  const contentType = codec.format === "json" ? "application/json" : "application/vnd.schemaregistry.v1+json";
  async function encode(outputs: OutboundMessage[], inbound: IHeaders | undefined): Promise<TopicMessages[]> {
    const byTopic = new Map<string, Message[]>();
    for (const output of outputs) {
      const topic = topics[output.role];
      const value = await codec.encode(topic, contractOf[output.role], output.value);
      const messages = byTopic.get(topic) ?? [];
      messages.push({
        key: output.key,
        value,
        headers: cloudEventHeaders(output, source, contentType, inbound),
      });
      byTopic.set(topic, messages);
    }
    return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
  }
  return {
    encode,
    async publish(outputs, inbound) {
      const topicMessages = await encode(outputs, inbound);
      try {
        await producer.sendBatch({ topicMessages });
      } catch (err) {
        throw new ReflectorError("PUBLISH_FAILED", `kafka produce: ${(err as Error).message}`, {
          cause: err,
        });
      }
    },
  };
}
