import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { createKafka, type KafkaClient } from "../../../src/adapters/kafka/kafka-client.js";
import { watchBridgeGroup } from "../../../src/composition/otlp-bridge-http.js";
import { createLogger } from "../../../src/observability/logger.js";

/** A client whose consumers are event emitters with kafkajs' event names, as kafkajs' are. */
function emittingClient() {
  const consumers: EventEmitter[] = [];
  const events = {
    GROUP_JOIN: "consumer.group_join",
    REBALANCING: "consumer.rebalancing",
    STOP: "consumer.stop",
    DISCONNECT: "consumer.disconnect",
    CRASH: "consumer.crash",
  };
  const client = {
    consumer: () => {
      const consumer = Object.assign(new EventEmitter(), { events });
      consumers.push(consumer);
      return consumer;
    },
  } as unknown as KafkaClient;
  return { client, consumers, events };
}

describe("the standalone bridge's group membership (its readiness)", () => {
  it("is in only between joining its group and a rebalance, stop or disconnect, and never after a crash", () => {
    const { client, consumers, events } = emittingClient();
    const changes: boolean[] = [];
    const group = watchBridgeGroup(client, (joined) => changes.push(joined));
    group.kafka.consumer({ groupId: "reflector.otlp" });
    const consumer = consumers[0];
    if (!consumer) throw new Error("no consumer built through the watched client");
    expect(group.isJoined()).toBe(false);
    for (const out of [events.REBALANCING, events.STOP, events.DISCONNECT]) {
      consumer.emit(events.GROUP_JOIN, {});
      expect(group.isJoined(), `joined before ${out}`).toBe(true);
      consumer.emit(out, {});
      expect(group.isJoined(), `after ${out}`).toBe(false);
    }
    consumer.emit(events.GROUP_JOIN, {});
    consumer.emit(events.CRASH, {});
    consumer.emit(events.GROUP_JOIN, {});
    expect(group.isJoined(), "a crashed consumer is out for good").toBe(false);
    expect(changes).toEqual([true, false, true, false, true, false, true, false, false]);
  });

  it("hands every other call to the client itself, whose methods need its private fields", () => {
    const client = createKafka({
      connection: { brokers: ["127.0.0.1:1"], ssl: false, sasl: undefined },
      clientId: "watch-test",
      logger: createLogger("silent"),
    });
    const { kafka } = watchBridgeGroup(client);
    // Building clients opens no connection; through a bare proxy these throw on the private fields.
    expect(() => kafka.admin()).not.toThrow();
    expect(() => kafka.producer()).not.toThrow();
    expect(typeof kafka.consumer({ groupId: "g" }).run).toBe("function");
    expect(kafka.checkAccess()).toBeInstanceOf(Promise);
  });
});
