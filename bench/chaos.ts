/**
 * Chaos run (bounded, CI-runnable, not part of `npm test`): a stream of valid and fuzzed events
 * while the processor is killed with SIGKILL again and again, and a private Redis and a private
 * Postgres (own ports, own data directory; the machine's shared ones are never touched) are
 * stopped and restarted. At the end every event is accounted for from what a read_committed
 * consumer sees and what Postgres holds. Exit code 0 only when nothing is lost or duplicated.
 *
 *   npx tsx bench/chaos.ts            (or scripts/chaos.sh)
 *   npx tsx bench/chaos.ts --llm-faults   (or scripts/chaos.sh --llm-faults)
 * Env: CHAOS_EVENTS (3000), CHAOS_FUZZ (500), CHAOS_SECONDS (60, production time),
 *      CHAOS_KILLS (6), CHAOS_PG_PORT (5440), CHAOS_REDIS_PORT (6390), KAFKA_BROKERS,
 *      CHAOS_PROCESSES (1): processors in one consumer group; with more than one, every other
 *        chaos step is a rolling restart (SIGTERM, wait, start) instead of a kill -9, and
 *        partitions move between them at every step,
 *      CHAOS_DUPLICATES (200): valid events produced a second time (same event id, another
 *        record, as a retrying producer does); each must still have exactly one decision,
 *      CHAOS_POISONED (200; 0 with --llm-faults): valid events of two tenants whose traces and
 *        errors carry a URL, `curl … | sh` tool names, credentials and "SYSTEM NOTICE TO ALL
 *        AGENTS …" (bench/chaos-poison.ts); after the run, what the lessons API serves each tenant
 *        and what Postgres stores must hold none of it, and nothing of the other tenant,
 *      CHAOS_TENANT_B (200; 0 with --llm-faults): clean events of the second tenant with the same
 *        failures as the first's: its lessons must be its own (never an increment of the first's).
 * Once everything is accounted for, and before the processors stop, the whole dead-letter queue
 * is replayed as an operator would (`reflector dlq replay`; not with --llm-faults): every dead
 * letter must come back to the DLQ exactly once, with no decision and no stored row.
 *
 * `--llm-faults`: the processor runs with the openai generator and embeddings against a fake
 * OpenAI-compatible server that follows a fault schedule (bench/chaos-llm-faults.ts): hangs past
 * the client timeout, 500/503 bursts, 429 with Retry-After, garbage answers, and an outage long
 * enough to open the circuit breaker. Defaults there: 1000 events over 500 signatures (so the
 * LLM is called all through the run), 100 fuzzed, 2 kills, no Redis/Postgres stops (their pauses
 * would blur the LLM ones). A valid event may then legitimately end in the DLQ (garbage answers
 * spend its attempts): each valid event must end in exactly one committed decision or one
 * dead letter, and the run reports the retries, retry-topic hand-offs, DLQ reasons and pauses.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createLogTally, printLlmTally, startFaultyLlm } from "./chaos-llm-faults.js";
import { replayDeadLetters } from "../src/adapters/kafka/admin/dlq-replay.js";
import { createLogger } from "../src/observability/logger.js";
import { createPoisonRun } from "./chaos-poison.js";
import { benchEvent, benchSetup, deleteTopics, startCounter } from "./support.js";

const llmFaults = process.argv.includes("--llm-faults");
const events = Number(process.env.CHAOS_EVENTS ?? (llmFaults ? 1000 : 3000));
const fuzzCount = Number(process.env.CHAOS_FUZZ ?? (llmFaults ? 100 : 500));
const produceSeconds = Number(process.env.CHAOS_SECONDS ?? 60);
const kills = Number(process.env.CHAOS_KILLS ?? (llmFaults ? 2 : 6));
/** Distinct error signatures among the valid events (new ones need the LLM). */
const signatureCount = llmFaults ? Math.max(1, Math.floor(events / 2)) : Math.max(1, Math.floor(events / 20));
const pgPort = Number(process.env.CHAOS_PG_PORT ?? 5440);
const redisPort = Number(process.env.CHAOS_REDIS_PORT ?? 6390);
const deadlineMs = Number(process.env.CHAOS_DEADLINE_MS ?? 300_000);
const processes = Math.max(1, Number(process.env.CHAOS_PROCESSES ?? 1));
const duplicates = Math.min(events, Number(process.env.CHAOS_DUPLICATES ?? 200));
const poisoned = Number(process.env.CHAOS_POISONED ?? (llmFaults ? 0 : 200));
const cleanB = Number(process.env.CHAOS_TENANT_B ?? (llmFaults ? 0 : 200));

const log = (message: string) => {
  console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${message}`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let seed = 20261122;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
}

// ---- private Postgres and Redis ----
const pgBin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"])
  .toString()
  .trim();
const pgDir = mkdtempSync(join(tmpdir(), "reflector-chaos-pg-"));
const asPostgres = (cmd: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", join(pgBin, cmd), ...args], { stdio: "pipe" });

function startPostgres(): void {
  asPostgres("pg_ctl", [
    "-D",
    pgDir,
    "-o",
    `-p ${String(pgPort)} -k /tmp -c fsync=off`,
    "-l",
    join(pgDir, "log"),
    "-w",
    "start",
  ]);
}
function stopPostgres(): void {
  asPostgres("pg_ctl", ["-D", pgDir, "-m", "immediate", "-w", "stop"]);
}
function startRedis(): void {
  execFileSync("redis-server", [
    "--port",
    String(redisPort),
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "yes",
    "--pidfile",
    join(tmpdir(), `reflector-chaos-redis-${String(redisPort)}.pid`),
  ]);
}
function stopRedis(): void {
  execFileSync("redis-cli", ["-p", String(redisPort), "shutdown", "nosave"], { stdio: "ignore" });
}

// ---- fuzzed inputs: bytes, broken JSON, wrong shapes, and what a hostile producer sends ----
function nestedJson(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}
/** A fuzzed record: each must end decided (a hostile but valid event) or dead-lettered. */
function fuzzValue(i: number, valid: string): Buffer | string | null {
  const event = JSON.parse(valid) as Record<string, unknown> & {
    task: Record<string, unknown>;
    events: Record<string, unknown>[];
  };
  const step = event.events[0] ?? {};
  switch (i % 14) {
    case 0:
      return Buffer.from(
        Array.from({ length: 1 + Math.floor(random() * 200) }, () => Math.floor(random() * 256)),
      );
    case 1:
      return valid.slice(0, Math.floor(random() * valid.length));
    case 2:
      return JSON.stringify({ ...event, tenantId: 42 });
    case 3:
      return JSON.stringify({ ...event, schemaVersion: 99 });
    case 4:
      return "";
    case 5:
      return JSON.stringify([random(), "not an event"]);
    case 6: // a NUL byte in free text (made storable) and in an id (refused)
      return JSON.stringify({ ...event, task: { ...event.task, description: "orders\u0000 export" } });
    case 7:
      return JSON.stringify({ ...event, loopId: "loop\u0000x" });
    case 8: // a lone surrogate, escaped as JSON allows
      return valid.replace('"tenantId":"', '"tenantId":"\\ud800');
    case 9: // a 1 MB single-line step
      return JSON.stringify({ ...event, events: [{ ...step, content: "x".repeat(1_000_000) }] });
    case 10: // 5,000 levels of nesting in a step's metadata
      return valid.replace('"metadata":{', `"metadata":{"deep":${nestedJson(5_000)},`);
    case 11: // numbers past integer columns: a rerun suffix and an iteration count
      return JSON.stringify({
        ...event,
        loopId: `${String(event.loopId)}_r3000000000`,
        rerunOf: event.loopId,
      });
    case 12: // a 3,000-character tool name
      return JSON.stringify({ ...event, events: [{ ...step, toolName: "t".repeat(3_000) }] });
    default: // a 60,000-digit step
      return JSON.stringify({ ...event, events: [{ ...step, content: "1".repeat(60_000) }] });
  }
}

async function main(): Promise<number> {
  chownSync(
    pgDir,
    Number(execFileSync("id", ["-u", "postgres"]).toString()),
    Number(execFileSync("id", ["-g", "postgres"]).toString()),
  );
  asPostgres("initdb", ["-D", pgDir, "-A", "trust", "-U", "postgres"]);
  startPostgres();
  startRedis();
  const databaseUrl = `postgres://postgres@127.0.0.1:${String(pgPort)}/reflector_chaos`;
  const redisUrl = `redis://127.0.0.1:${String(redisPort)}/0`;
  const llm = llmFaults ? await startFaultyLlm(produceSeconds * 1000) : null;
  const logTally = createLogTally();
  const setup = await benchSetup("chaos", 6, {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    KAFKA_SESSION_TIMEOUT_MS: "6000",
    HANDLER_RETRY_BASE_MS: "50",
    LOG_LEVEL: llm ? "info" : "warn",
    ...(llm
      ? {
          REFLECTOR_GENERATOR: "openai",
          REFLECTOR_EMBEDDINGS: "openai",
          OPENAI_BASE_URL: llm.url,
          REFLECTOR_MODEL: "chaos-model",
          REFLECTOR_EMBEDDING_MODEL: "chaos-embedding",
          // Hangs must cost seconds, not the default 30 s per request; but not 1 s either: on a
          // loaded 2-core machine healthy requests then time out too and the circuit flaps.
          OPENAI_TIMEOUT_MS: "3000",
          OPENAI_MAX_RETRIES: "2",
          LLM_CIRCUIT_FAILURE_THRESHOLD: "5",
          LLM_CIRCUIT_OPEN_MS: "3000",
          // One LLM call per reflection (see bench/llm.ts): garbage, not the quality rules, decides
          // the retries.
          MAX_REFLECTION_ATTEMPTS: "1",
          RETRY_TOPIC_DELAY_MS: "2000",
        }
      : {}),
  });
  const cli = fileURLToPath(new URL("../test/support/run-cli.ts", import.meta.url));
  const env = { ...process.env, ...setup.env, KAFKA_TRANSACTIONAL_ID: `chaos-${setup.id}` };
  execFileSync(process.execPath, ["--import", "tsx", cli, "migrate"], { env, stdio: "pipe" });
  // Each processor of the group has its own transactional id, as each pod of a StatefulSet does.
  const envOf = (slot: number) => ({ ...env, KAFKA_TRANSACTIONAL_ID: `chaos-${setup.id}-${String(slot)}` });
  log(
    `private postgres :${String(pgPort)} (${pgDir}), private redis :${String(redisPort)}, topics bench.${setup.id}.*`,
  );

  // What a read_committed consumer sees.
  const decisions = new Map<string, number>();
  const deadLetters = new Map<string, number>();
  /** Dead-letter reasons of valid events (`reflector.error.code`). */
  const validDlqCodes = new Map<string, number>();
  const retryCopies = new Map<string, number>();
  /** What arrives while the dead-letter queue is replayed, counted apart (see replayPhase). */
  const replayCounts = { decisions: new Map<string, number>(), deadLetters: new Map<string, number>() };
  let replaying = false;
  const decisionCounter = await startCounter(setup.kafka, [setup.config.topics.loopDecision], (value) => {
    const id = value ? (JSON.parse(value.toString()) as { sourceEventId: string }).sourceEventId : "?";
    const into = replaying ? replayCounts.decisions : decisions;
    into.set(id, (into.get(id) ?? 0) + 1);
  });
  const dlqConsumer = setup.kafka.consumer({ groupId: `chaos-dlq-${setup.id}`, readUncommitted: false });
  await dlqConsumer.connect();
  await dlqConsumer.subscribe({ topics: [setup.config.topics.deadLetter], fromBeginning: true });
  await dlqConsumer.run({
    eachMessage: async ({ message }) => {
      const key = message.key?.toString() ?? "?";
      if (replaying) {
        replayCounts.deadLetters.set(key, (replayCounts.deadLetters.get(key) ?? 0) + 1);
        return;
      }
      deadLetters.set(key, (deadLetters.get(key) ?? 0) + 1);
      if (!key.startsWith("fuzz-")) {
        const code = message.headers?.["reflector.error.code"]?.toString() ?? "?";
        validDlqCodes.set(code, (validDlqCodes.get(code) ?? 0) + 1);
      }
      await Promise.resolve();
    },
  });
  const retryConsumer = setup.kafka.consumer({ groupId: `chaos-retry-${setup.id}`, readUncommitted: false });
  await retryConsumer.connect();
  await retryConsumer.subscribe({ topics: [setup.config.topics.retry], fromBeginning: true });
  await retryConsumer.run({
    eachMessage: async ({ message }) => {
      const key = message.key?.toString() ?? "?";
      retryCopies.set(key, (retryCopies.get(key) ?? 0) + 1);
      await Promise.resolve();
    },
  });

  async function replayPhase() {
    const summary = await replayDeadLetters({
      kafka: setup.kafka,
      deadLetterTopic: setup.config.topics.deadLetter,
      targetTopic: setup.config.topics.taskCompleted,
      sourceTopics: [setup.config.topics.taskCompleted, setup.config.topics.retry],
      groupId: `chaos-replay-${setup.id}`,
      dryRun: false,
      idleTimeoutMs: 10_000,
      logger: createLogger("warn"),
    });
    const replayed = summary.items.filter((i) => i.action === "replayed").map((i) => i.key ?? "?");
    log(`dlq replay: ${String(summary.replayed)} replayed, ${String(summary.skipped)} skipped`);
    const back = () => replayed.filter((k) => (replayCounts.deadLetters.get(k) ?? 0) > 0).length;
    const until = Date.now() + 120_000;
    while (Date.now() < until && back() < replayed.length) await sleep(500);
    await sleep(3000);
    const twice = replayed.filter((k) => (replayCounts.deadLetters.get(k) ?? 0) > 1).length;
    const why = new Map<string, number>();
    for (const item of summary.items.filter((i) => i.action === "skipped"))
      why.set(item.reason ?? "?", (why.get(item.reason ?? "?") ?? 0) + 1);
    const ok =
      replayed.length > 0 &&
      summary.unfinished.length === 0 &&
      back() === replayed.length &&
      twice === 0 &&
      replayCounts.decisions.size === 0;
    return {
      ok,
      line: `dlq replay          ${String(summary.replayed)} dead letters replayed (skipped ${String(summary.skipped)}${why.size > 0 ? `: ${[...why].map(([r, n]) => `${r} ${String(n)}`).join(", ")}` : ""}); dead-lettered again ${String(back())}   lost ${String(replayed.length - back())}   twice ${String(twice)}   decisions ${String(replayCounts.decisions.size)}`,
    };
  }

  // The processors, each restarted whenever it exits (as an orchestrator would).
  const children: (ChildProcess | null)[] = Array.from({ length: processes }, () => null);
  let running = true;
  let starts = 0;
  let unplannedExits = 0;
  const stoppingSlots = new Set<number>();
  function spawnProcessor(slot: number): void {
    starts += 1;
    const proc = spawn(process.execPath, ["--import", "tsx", cli, "start"], {
      env: envOf(slot),
      stdio: ["ignore", "pipe", "pipe"],
    });
    // CHAOS_LOG=<file> keeps the processors' logs (warn and above) for a post-mortem.
    logTally.reset();
    for (const stream of [proc.stdout, proc.stderr]) {
      stream.on("data", (chunk: Buffer) => {
        if (process.env.CHAOS_LOG) appendFileSync(process.env.CHAOS_LOG, chunk);
        if (stream === proc.stdout) logTally.feed(chunk);
      });
    }
    proc.once("exit", (code, signal) => {
      if (stoppingSlots.has(slot) || !running) return;
      unplannedExits += 1;
      log(
        `processor ${String(slot)} exited by itself (code ${String(code)}, signal ${String(signal)}); restarting`,
      );
      spawnProcessor(slot);
    });
    children[slot] = proc;
  }
  /** Stops a processor with `signal` and starts it again (SIGKILL: a crash; SIGTERM: a rolling restart). */
  async function restart(slot: number, signal: "SIGKILL" | "SIGTERM"): Promise<void> {
    const current = children[slot];
    if (!current) return;
    stoppingSlots.add(slot);
    const exited = new Promise((resolve) => current.once("exit", resolve));
    current.kill(signal);
    await exited;
    stoppingSlots.delete(slot);
    spawnProcessor(slot);
  }
  for (let slot = 0; slot < processes; slot += 1) spawnProcessor(slot);

  // Produce valid events and fuzzed inputs interleaved, at a steady rate.
  const producer = setup.kafka.producer();
  await producer.connect();
  const tenantId = setup.tenantId;
  const poisonRun = createPoisonRun({
    tenantId,
    count: poisoned,
    cleanB,
    signatureCount,
    cleanEvent: benchEvent,
  });
  const base = events + fuzzCount + duplicates;
  const total = base + poisonRun.records;
  const order = Array.from({ length: total }, (_, i) => i).sort(() => random() - 0.5);
  llm?.begin();
  const producing = (async () => {
    const perTick = Math.max(1, Math.ceil(total / (produceSeconds * 10)));
    for (let i = 0; i < order.length; i += perTick) {
      const messages = order.slice(i, i + perTick).map((n) => {
        if (n < events) {
          const event = benchEvent(tenantId, n, n % signatureCount);
          return { key: event.loopId, value: JSON.stringify(event) };
        }
        if (n >= base) return poisonRun.record(n - base);
        if (n >= events + fuzzCount) {
          // A second record of a valid event: its decision must not be published again.
          const copy = n - events - fuzzCount;
          const event = benchEvent(tenantId, copy, copy % signatureCount);
          return { key: event.loopId, value: JSON.stringify(event) };
        }
        const valid = JSON.stringify(benchEvent(tenantId, n, 0));
        return { key: `fuzz-${String(n)}`, value: fuzzValue(n, valid) };
      });
      // A record near the broker's 1 MB limit goes alone: two in one partition's batch would be refused.
      const big = messages.filter((m) => (m.value?.length ?? 0) > 100_000);
      const small = messages.filter((m) => (m.value?.length ?? 0) <= 100_000);
      if (small.length > 0)
        await producer.send({ topic: setup.config.topics.taskCompleted, messages: small });
      for (const message of big) {
        await producer.send({ topic: setup.config.topics.taskCompleted, messages: [message] });
      }
      await sleep(100);
    }
  })();

  // Chaos schedule over the production window.
  const gap = (produceSeconds * 1000) / (kills + 1);
  for (let k = 1; k <= kills; k += 1) {
    await sleep(gap * (0.6 + 0.8 * random()));
    if (k === 2 && !llm) {
      log("stopping private redis (data lost: it restarts empty)");
      stopRedis();
      await sleep(4000);
      startRedis();
      log("private redis back");
    }
    if (k === 4 && !llm) {
      log("stopping private postgres (immediate)");
      stopPostgres();
      await sleep(6000);
      startPostgres();
      log("private postgres back");
    }
    const slot = Math.floor(random() * processes);
    const signal = processes > 1 && k % 2 === 0 ? "SIGTERM" : "SIGKILL";
    log(
      `${signal === "SIGKILL" ? "kill -9" : "rolling restart"} of processor ${String(slot)} #${String(k)} (decisions so far ${String(decisions.size)}, dead letters ${String(deadLetters.size)})`,
    );
    await restart(slot, signal);
  }
  await producing;
  await producer.disconnect();
  log("all input produced; waiting for the processor to account for everything");

  const until = Date.now() + deadlineMs;
  const settled = () => {
    const fuzzDead = [...deadLetters.keys()].filter((k) => k.startsWith("fuzz-")).length;
    // Decisions include hostile-but-valid fuzzed events; every record is accounted for when the
    // decisions and dead letters together cover all of them.
    return decisions.size + deadLetters.size >= events + fuzzCount + poisonRun.records && fuzzDead > 0;
  };
  while (Date.now() < until && !settled()) await sleep(500);
  await sleep(3000); // late duplicates, if any, arrive now
  // The operator's `reflector dlq replay` of the whole queue, with the processors still running:
  // every dead letter goes back to the input once and must end in the DLQ again, once, with no
  // decision and no row (a fuzzed record is no better the second time).
  replaying = true;
  const replay = llm ? null : await replayPhase();
  running = false;
  const stopping = { hung: false };
  await Promise.all(
    children.map(async (last) => {
      if (last?.exitCode !== null || last.signalCode !== null) return;
      const exited = new Promise((resolve) => last.once("exit", resolve));
      last.kill("SIGTERM");
      // The run is over either way; a processor that ignores SIGTERM is reported, then killed.
      const timer = setTimeout(() => {
        stopping.hung = true;
        last.kill("SIGKILL");
      }, 40_000);
      await exited;
      clearTimeout(timer);
    }),
  );

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const rows = await pool.query<{ total: string; distinct: string }>(
    "SELECT count(*) AS total, count(DISTINCT event_id) AS distinct FROM processed_events WHERE tenant_id = $1 AND event_id NOT LIKE 'poison-%'",
    [tenantId],
  );
  const poisonAccounting = await poisonRun.account(pool, decisions, deadLetters);
  await pool.end();
  // Each valid event must end in exactly one committed decision or (only with LLM faults, whose
  // garbage answers spend its attempts) exactly one dead letter; never both, never neither.
  let lost = 0;
  let duplicateOutputs = 0;
  let withDecision = 0;
  let validDeadLettered = 0;
  for (let n = 0; n < events; n += 1) {
    const decided = decisions.get(`evt-${tenantId}-${String(n)}`) ?? 0;
    const dead = deadLetters.get(`loop-${tenantId}-${String(n)}`) ?? 0;
    if (decided + dead === 0) lost += 1;
    if (decided + dead > 1) duplicateOutputs += 1;
    if (decided > 0) withDecision += 1;
    if (dead > 0) validDeadLettered += 1;
  }
  // A fuzzed record ends dead-lettered (keyed fuzz-N) or, when it was a hostile but valid event
  // (made storable), decided under its event id: exactly one of the two.
  const fuzzEnds = Array.from({ length: fuzzCount }, (_, i) => {
    const n = events + i;
    return {
      dead: deadLetters.get(`fuzz-${String(n)}`) ?? 0,
      decided: decisions.get(`evt-${tenantId}-${String(n)}`) ?? 0,
    };
  });
  const fuzzLost = fuzzEnds.filter((f) => f.dead + f.decided === 0).length;
  const fuzzDuplicates = fuzzEnds.filter((f) => f.dead + f.decided > 1).length;
  const fuzzDecided = fuzzEnds.filter((f) => f.decided > 0).length;
  const rowTotal = Number(rows.rows[0]?.total ?? 0);
  const rowDistinct = Number(rows.rows[0]?.distinct ?? 0);
  const duplicateRetryCopies = [...retryCopies.values()].filter((n) => n > 1).length;

  console.log(`\nChaos accounting${llm ? " (LLM faults)" : ""}`);
  console.log(
    `  processors ${String(processes)} in one group; starts ${String(starts)} (chaos steps: ${String(kills)}${processes > 1 ? ", kill -9 and rolling restarts alternating" : ", each a kill -9"}; unplanned exits: ${String(unplannedExits)}); ${llm ? "LLM server on a fault schedule" : "redis and postgres each stopped and restarted once"}`,
  );
  console.log(
    `  valid events        ${String(events)} (${String(signatureCount)} distinct signatures; ${String(duplicates)} of them produced twice)`,
  );
  console.log(
    `    with a committed decision   ${String(withDecision)}   lost ${String(lost)}   duplicate outputs (decision or dead letter) ${String(duplicateOutputs)}`,
  );
  console.log(
    `    processed_events rows        ${String(rowTotal)}   distinct ${String(rowDistinct)}   duplicate rows ${String(rowTotal - rowDistinct)}`,
  );
  console.log(
    `    dead-lettered                ${String(validDeadLettered)}${validDeadLettered > 0 ? ` (reasons: ${[...validDlqCodes].map(([c, k]) => `${c} ${String(k)}`).join(", ")})` : ""}`,
  );
  console.log(
    `    via the retry topic          ${String(retryCopies.size)} events (${String(duplicateRetryCopies)} handed over twice)`,
  );
  console.log(`  fuzzed inputs       ${String(fuzzCount)}`);
  console.log(
    `    dead-lettered                ${String(fuzzCount - fuzzLost - fuzzDecided)}   decided (hostile but valid) ${String(fuzzDecided)}   lost ${String(fuzzLost)}   duplicates ${String(fuzzDuplicates)}`,
  );
  for (const line of poisonAccounting.lines) console.log(`  ${line}`);
  if (replay) console.log(`  ${replay.line}`);
  if (llm) printLlmTally(logTally.tally, llm.replies, llm.requests());
  if (stopping.hung) console.log("  NOTE: a processor did not exit within 40 s of SIGTERM and was killed");
  const ok =
    lost === 0 &&
    duplicateOutputs === 0 &&
    rowTotal === withDecision + fuzzDecided &&
    rowDistinct === withDecision + fuzzDecided &&
    fuzzLost === 0 &&
    fuzzDuplicates === 0 &&
    duplicateRetryCopies === 0 &&
    poisonAccounting.ok &&
    (replay?.ok ?? true) &&
    // Without LLM faults nothing valid has a reason to be dead-lettered.
    (llm !== null || validDeadLettered === 0);
  console.log(
    ok
      ? "  RESULT: every event accounted for, 0 lost, 0 duplicates, 0 poisoned lessons served, 0 crossed tenants"
      : "  RESULT: FAILED",
  );

  await decisionCounter.stop();
  await dlqConsumer.disconnect();
  await retryConsumer.disconnect();
  await llm?.close();
  await deleteTopics(setup);
  return ok ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(err);
} finally {
  try {
    stopRedis();
  } catch {
    // already stopped
  }
  try {
    stopPostgres();
  } catch {
    // already stopped
  }
  rmSync(pgDir, { recursive: true, force: true });
}
process.exit(code);
