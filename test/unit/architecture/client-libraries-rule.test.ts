import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layerViolations, removeProbeTree, writeProbeTree } from "../../support/layer-probes.js";

/**
 * The rule "client libraries stay in their adapters" of .dependency-cruiser.mjs, proved on a
 * throw-away tree: the same config (as `npm run layers` runs it) over a `src/` of probe files,
 * some importing a client library where they may, some where they may not. The probes live in a
 * temporary directory, never in this repository's src/, so nothing else sees them.
 */
const clientRules = [
  "kafkajs-stays-in-the-kafka-adapter",
  "schema-registry-client-stays-in-its-adapter",
  "pg-stays-in-the-postgres-adapter",
  "ioredis-stays-in-the-redis-adapter",
  "openai-stays-in-the-llm-adapter",
];

/** Each probe: its path under src/ and the library it imports. */
const probes: Record<string, string> = {
  // Allowed: each library in its own adapter, and pg / ioredis where the builders open them.
  "src/adapters/kafka/client.ts": "kafkajs",
  "src/adapters/schema-registry/codec.ts": "@kafkajs/confluent-schema-registry",
  "src/adapters/postgres/store.ts": "pg",
  "src/adapters/redis/index.ts": "ioredis",
  "src/adapters/llm/model.ts": "openai",
  "src/composition/builders.ts": "pg",
  // Wrong: a library outside its adapter, or where the builders were before src/composition/.
  "src/builders.ts": "pg",
  "src/composition/app.ts": "kafkajs",
  "src/ops/lag.ts": "kafkajs",
  "src/adapters/postgres/outbox.ts": "kafkajs",
  "src/cli/score-command.ts": "pg",
  "src/features/lessons/cache.ts": "ioredis",
  "src/adapters/embedding/remote.ts": "openai",
  "src/composition/otlp-bridge-app.ts": "@kafkajs/confluent-schema-registry",
};

let root = "";

beforeAll(() => {
  root = writeProbeTree(
    Object.fromEntries(
      Object.entries(probes).map(([file, library]) => [
        file,
        `import * as client from "${library}";\nexport const used = client;\n`,
      ]),
    ),
  );
});

afterAll(() => {
  removeProbeTree(root);
});

async function violations() {
  return (await layerViolations(root)).filter((v) => clientRules.includes(v.rule.name));
}

describe("client libraries stay in their adapters (.dependency-cruiser.mjs)", () => {
  it("fails every import of a client library outside its adapter, and only those", async () => {
    const found = (await violations()).map((v) => `${v.rule.name}: ${v.from}`).sort();
    expect(found).toEqual(
      [
        "kafkajs-stays-in-the-kafka-adapter: src/adapters/postgres/outbox.ts",
        "kafkajs-stays-in-the-kafka-adapter: src/composition/app.ts",
        "pg-stays-in-the-postgres-adapter: src/builders.ts",
        "kafkajs-stays-in-the-kafka-adapter: src/ops/lag.ts",
        "openai-stays-in-the-llm-adapter: src/adapters/embedding/remote.ts",
        "ioredis-stays-in-the-redis-adapter: src/features/lessons/cache.ts",
        "pg-stays-in-the-postgres-adapter: src/cli/score-command.ts",
        "schema-registry-client-stays-in-its-adapter: src/composition/otlp-bridge-app.ts",
      ].sort(),
    );
  }, 120_000);
});
