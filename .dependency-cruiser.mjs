/**
 * The layering of src/ (docs/architecture.md#layers), checked on every import by
 * `npm run layers` (part of `npm test`). Each rule's comment is the message a violation prints.
 * test/unit/architecture/client-libraries-rule.test.ts proves the client-library rules on probe files.
 * @type {import('dependency-cruiser').IConfiguration}
 */
export default {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment:
        "Import cycles are not allowed: move what both modules need to a third (usually a port or the domain).",
      from: {},
      to: { circular: true },
    },
    {
      name: "client-stands-alone",
      severity: "error",
      comment:
        "The TypeScript client (src/client, packed as @reflector/client by clients/typescript) is what agents install: it uses fetch and its own types only, never the server's code or packages. Copy the few shapes it needs instead.",
      from: { path: "^src/client/" },
      to: {
        pathNot: "^src/client/",
        dependencyTypes: ["local", "npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown"],
      },
    },
    {
      name: "domain-imports-only-itself",
      severity: "error",
      comment:
        "The domain is pure: it imports only zod, node:crypto and itself. Define a port in the pipeline instead.",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/domain/" },
    },
    {
      name: "domain-packages",
      severity: "error",
      comment: "The domain imports no package but zod, and no Node.js module but node:crypto.",
      from: { path: "^src/domain/" },
      to: {
        dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown", "core"],
        pathNot: ["(^|/)node_modules/zod/", "^(node:)?crypto$"],
      },
    },
    {
      name: "pipeline-imports-only-the-domain",
      severity: "error",
      comment:
        "The pipeline (stages and their ports) imports only the domain and itself; adapters implement its ports.",
      from: { path: "^src/pipeline/" },
      to: { path: "^src/", pathNot: "^src/(domain|pipeline)/" },
    },
    {
      name: "pipeline-packages",
      severity: "error",
      comment: "The pipeline imports no package but zod: clients stay behind ports, in the adapters.",
      from: { path: "^src/pipeline/" },
      to: {
        dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown"],
        pathNot: "(^|/)node_modules/zod/",
      },
    },
    {
      name: "pipeline-stages-stay-inside",
      severity: "error",
      comment:
        "A stage (src/pipeline/stages/) is the pipeline's own: what another layer needs of it (a port, such as QualityObserver) lives in src/pipeline/ports.ts.",
      from: { path: "^src/", pathNot: "^src/pipeline/" },
      to: { path: "^src/pipeline/stages/" },
    },
    {
      name: "pipeline-holds-no-kafka-only-module",
      severity: "error",
      comment:
        "A module of src/pipeline/ that only the Kafka adapter imports (an ordered scheduler, a retry policy) belongs in src/adapters/kafka/.",
      from: { path: "^src/", pathNot: "^src/adapters/kafka/" },
      module: { path: "^src/pipeline/", numberOfDependentsLessThan: 1 },
    },
    {
      name: "adapter-imports-no-other-adapter",
      severity: "error",
      comment:
        "An adapter never imports another adapter: share a port (src/pipeline/ports.ts) and let the composition root (src/composition/) combine them.",
      from: { path: "^src/adapters/([^/]+)/" },
      to: { path: "^src/adapters/", pathNot: "^src/adapters/$1/" },
    },
    {
      name: "adapters-import-down-only",
      severity: "error",
      comment:
        "Adapters import the domain, the pipeline's ports, observability and the maintenance ports only; never the composition root, cli, config, http or a feature. The operator tools that speak Kafka (lag, DLQ replay) live in src/adapters/kafka/admin/.",
      from: { path: "^src/adapters/" },
      to: {
        path: "^src/",
        pathNot: [
          "^src/(adapters|domain|pipeline|observability)/",
          "^src/maintenance/maintenance-ports\\.ts$",
        ],
      },
    },
    {
      name: "only-the-composition-root-builds-adapters",
      severity: "error",
      comment:
        "Only the composition root (src/composition/) imports adapters; the CLI uses the builders of src/composition/builders.ts.",
      from: { path: "^src/", pathNot: ["^src/composition/", "^src/adapters/"] },
      to: { path: "^src/adapters/" },
    },
    {
      name: "only-entry-points-import-the-composition-root",
      severity: "error",
      comment:
        "Only the entry points (src/main.ts, src/cli/) import the composition root (src/composition/).",
      from: {
        path: "^src/",
        pathNot: [
          "^src/main\\.ts$",
          "^src/composition/",
          "^src/cli/",
          "^src/(app|builders|otlp-bridge-app)\\.ts$",
        ],
      },
      to: { path: "^src/composition/" },
    },
    {
      name: "the-old-root-entries-only-re-export",
      severity: "error",
      comment:
        "src/app.ts, src/builders.ts and src/otlp-bridge-app.ts only re-export src/composition/ for the benchmarks that name them: src/ imports src/composition/ itself, and the wiring lives there.",
      from: { path: "^src/" },
      to: { path: "^src/(app|builders|otlp-bridge-app)\\.ts$" },
    },
    {
      name: "only-the-cli-imports-main",
      severity: "error",
      comment: "src/main.ts (signals and exit codes) is started by the CLI only.",
      from: { path: "^src/", pathNot: "^src/cli/" },
      to: { path: "^src/main\\.ts$" },
    },
    {
      name: "features-are-independent",
      severity: "error",
      comment:
        "A feature (src/features/<feature>/) never imports another feature; what they share belongs in the domain or src/features/api-context.ts.",
      from: { path: "^src/features/([^/]+)/" },
      to: { path: "^src/features/", pathNot: ["^src/features/$1/", "^src/features/api-context\\.ts$"] },
    },
    {
      name: "features-stay-above-the-stores",
      severity: "error",
      comment:
        "A feature imports the domain, the pipeline, its own files, src/features/api-context.ts and the API roles (src/config/api-keys-setting.ts); never src/http/, which composes the features; its store is a port the composition root fills.",
      from: { path: "^src/features/" },
      to: {
        path: "^src/",
        pathNot: ["^src/(domain|pipeline|features)/", "^src/config/api-keys-setting\\.ts$"],
      },
    },
    {
      name: "http-composes-features-only",
      severity: "error",
      comment:
        "src/http/ imports the features, the domain, the pipeline, observability and config; never an adapter, maintenance or an entry point.",
      from: { path: "^src/http/" },
      to: { path: "^src/", pathNot: "^src/(http|features|domain|pipeline|observability|config)/" },
    },
    {
      name: "support-layers-stay-low",
      severity: "error",
      comment:
        "maintenance, observability and config import the domain, the pipeline and each other; never an adapter, http, a feature or an entry point.",
      from: { path: "^src/(maintenance|observability|config)/" },
      to: { path: "^src/", pathNot: "^src/(domain|pipeline|maintenance|observability|config)/" },
    },
    {
      name: "kafkajs-stays-in-the-kafka-adapter",
      severity: "error",
      comment:
        "kafkajs is imported only in src/adapters/kafka/: build producers with createProducer (producers.ts), simple consumers with createSimpleConsumer (simple-consumer.ts), and hold a client as KafkaClient (kafka-client.ts); the composition root gets them from there.",
      from: { path: "^src/", pathNot: "^src/adapters/kafka/" },
      to: { path: "(^|/)node_modules/kafkajs/" },
    },
    {
      name: "schema-registry-client-stays-in-its-adapter",
      severity: "error",
      comment:
        "@kafkajs/confluent-schema-registry is imported only in src/adapters/schema-registry/: encode and decode through the ValueCodec port (src/pipeline/ports.ts), built by buildCodec (src/composition/builders.ts).",
      from: { path: "^src/", pathNot: "^src/adapters/schema-registry/" },
      to: { path: "(^|/)node_modules/@kafkajs/confluent-schema-registry/" },
    },
    {
      name: "pg-stays-in-the-postgres-adapter",
      severity: "error",
      comment:
        "pg is imported only in src/adapters/postgres/ and the builders (src/composition/builders.ts, which opens the pool): use a store's port, and name a pool as ReturnType<typeof buildPostgresPool>.",
      from: { path: "^src/", pathNot: ["^src/adapters/postgres/", "^src/composition/builders\\.ts$"] },
      to: { path: "(^|/)node_modules/(@types/)?pg/" },
    },
    {
      name: "ioredis-stays-in-the-redis-adapter",
      severity: "error",
      comment:
        "ioredis is imported only in src/adapters/redis/ and the builders (src/composition/builders.ts, which opens the client): use the signature index, crash counter or budget ports, and let buildRedis hand the client over.",
      from: { path: "^src/", pathNot: ["^src/adapters/redis/", "^src/composition/builders\\.ts$"] },
      to: { path: "(^|/)node_modules/ioredis/" },
    },
    {
      name: "openai-stays-in-the-llm-adapter",
      severity: "error",
      comment:
        "openai is imported only in src/adapters/llm/: call a model through the ReflectionGenerator, AnswerEvaluator or Embedder ports, built by buildLlm (src/composition/builders.ts).",
      from: { path: "^src/", pathNot: "^src/adapters/llm/" },
      to: { path: "(^|/)node_modules/openai/" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "This import resolves to no file or package.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
