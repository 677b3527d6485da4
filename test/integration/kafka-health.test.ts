import { describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createKafka } from "../../src/adapters/kafka/kafka-client.js";
import { createKafkaHealthCheck } from "../../src/adapters/kafka/kafka-health.js";
import { createLogger } from "../../src/observability/logger.js";

const logger = createLogger("silent");
const adminFor = (brokers: string[]) =>
  createKafka({
    connection: { brokers, ssl: false, sasl: undefined },
    clientId: "health-test",
    logger,
  }).admin({ retry: { retries: 0 } });

describe("the Kafka readiness check", () => {
  it("is true when a broker answers and the producer is connected", async () => {
    const health = createKafkaHealthCheck({
      admin: adminFor(inject("kafkaBrokers").split(",")),
      isProducerConnected: () => true,
      timeoutMs: 5_000,
    });
    expect(await health.check()).toBe(true);
    await health.close();
  });

  it("is false, within its timeout, when no broker answers", async () => {
    const health = createKafkaHealthCheck({
      admin: adminFor(["127.0.0.1:1"]),
      isProducerConnected: () => true,
      timeoutMs: 2_000,
    });
    const started = Date.now();
    expect(await health.check()).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000);
    await health.close();
  });

  it("is false while the output producer is not connected", async () => {
    const health = createKafkaHealthCheck({
      admin: adminFor(inject("kafkaBrokers").split(",")),
      isProducerConnected: () => false,
      timeoutMs: 5_000,
    });
    expect(await health.check()).toBe(false);
    await health.close();
  });
});
