import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { buildLlm } from "../composition/builders.js";
import { loadConfig, type Config } from "../config/config.js";
import type { TaskCompleted } from "../domain/contracts/index.js";
import { selectForReflection } from "../domain/select-for-reflection.js";
import { loadRecordedAnswers, startRecordedModelServer, type Recording } from "./recorded-model-server.js";

/**
 * What the demo (demo.ts) runs on: the examples, the local services, and the second processor's
 * recorded answers and configuration.
 */

/** The package root. */
export const root = fileURLToPath(new URL("../../", import.meta.url));

/** One file of examples/: a rerun chain of task events, or a raw record that is not one. */
export interface Example {
  file: string;
  name: string;
  summary: string;
  events?: TaskCompleted[];
  raw?: string;
}

export async function loadExamples(): Promise<Example[]> {
  const dir = `${root}examples/`;
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  return Promise.all(
    files.map(async (file) => ({
      file,
      ...(JSON.parse(await readFile(dir + file, "utf8")) as Omit<Example, "file">),
    })),
  );
}

/**
 * Fetches the default embedder's model (wherever Kafka runs, the model must be on this machine),
 * then starts Kafka and the schema registry with the project's script unless KAFKA_BROKERS points
 * elsewhere.
 */
export function ensureLocalServices(): void {
  // Unset or empty (= unset, as in loadConfig) means the default, `static` (distilled from the model).
  const embeddings = process.env.REFLECTOR_EMBEDDINGS ?? "";
  if (["", "static", "local"].includes(embeddings) && !process.env.REFLECTOR_EMBEDDING_MODEL_DIR) {
    execFileSync("bash", [`${root}scripts/services.sh`, "models"], { stdio: "inherit" });
  }
  if (process.env.KAFKA_BROKERS) return;
  console.log("Starting local Kafka and schema registry (scripts/services.sh start)…");
  execFileSync("bash", [`${root}scripts/services.sh`, "start"], { stdio: "inherit" });
  const env = execFileSync("bash", [`${root}scripts/services.sh`, "env"], { encoding: "utf8" });
  for (const line of env.split("\n")) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match?.[1] && match[2] !== undefined) process.env[match[1]] = match[2];
  }
}

const RECORDED_ANSWERS = `${root}test/fixtures/recorded-answers/examples`;

/**
 * What the second processor needs: the examples whose every reflected event has a recorded answer
 * (an unrecorded request would get a 500, never an invented answer), the replay server, the
 * `openai` generator pointed at it, and a configuration with input, retry and dead-letter topics
 * and a consumer group of its own, so the two processors never read each other's events. Answers
 * are evaluated offline, as in the first pass: no evaluator answers were recorded.
 */
export async function recordedPass(config: Config, examples: Example[]) {
  const answers = await loadRecordedAnswers(RECORDED_ANSWERS);
  const recordingOf = (example: Example, i: number) =>
    answers.find((a) => a.id === `examples/${example.file.replace(/\.json$/, "")}/${String(i)}`);
  const reflected = (event: TaskCompleted) => selectForReflection(event, config.mode).reflect;
  const chosen = examples.filter((example) => {
    const events = example.events ?? [];
    return events.some(reflected) && events.every((e, i) => !reflected(e) || recordingOf(example, i));
  });
  const recordings: Recording[] = chosen.flatMap((example) =>
    (example.events ?? []).flatMap((event, i) => {
      const answer = recordingOf(example, i);
      return answer ? [{ event, answer }] : [];
    }),
  );
  const server = await startRecordedModelServer(recordings);
  const t = config.topics;
  const own = (topic: string) => `demo-recorded.${topic}`;
  // No OTLP bridge of its own: one processor of the demo is enough to run whatever bridge is set.
  const recordedConfig = loadConfig({
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("OTLP_"))),
    KAFKA_GROUP_ID: `${config.kafka.groupId}-recorded`,
    HTTP_PORT: "0",
    TOPIC_TASK_COMPLETED: own(t.taskCompleted),
    TOPIC_RETRY: own(t.retry),
    TOPIC_DLQ: own(t.deadLetter),
  });
  // Only the generator is built from this configuration: the processor keeps the demo's own.
  const { generator } = buildLlm(
    loadConfig({
      ...withoutModelEndpoint(process.env),
      REFLECTOR_GENERATOR: "openai",
      OPENAI_BASE_URL: server.url,
      REFLECTOR_MODEL: "recorded-answers",
      REFLECTOR_EMBEDDINGS: "hashing",
    }),
  );
  return { chosen, recordings, server, config: recordedConfig, generator };
}

/** The environment without a real model endpoint's settings, so nothing reaches a real model. */
function withoutModelEndpoint(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(
      ([key]) => !key.startsWith("OPENAI_") && !key.startsWith("REFLECTOR_EVALUATOR"),
    ),
  );
}

/** The database URL without its user and password, for display. */
export function withoutCredentials(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    url.username = "";
    url.password = "";
    return url.toString();
  } catch {
    return "(the configured database)";
  }
}
