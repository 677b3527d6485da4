/**
 * Chaos run (bounded, CI-runnable, not part of `npm test`): a stream of valid and fuzzed events
 * while the processor is killed with SIGKILL again and again, and a private Redis and a private
 * Postgres (own ports, own data directory; the machine's shared ones are never touched) are
 * stopped and restarted. At the end every event is accounted for from what a read_committed
 * consumer sees and what Postgres holds. Exit code 0 only when nothing is lost or duplicated.
 *
 *   npx tsx bench/chaos.ts            (or scripts/chaos.sh)
 * Env: CHAOS_EVENTS (3000), CHAOS_FUZZ (500), CHAOS_SECONDS (60, production time),
 *      CHAOS_KILLS (6), CHAOS_PG_PORT (5440), CHAOS_REDIS_PORT (6390), KAFKA_BROKERS.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { benchEvent, benchSetup, deleteTopics, startCounter } from "./support.js";

const events = Number(process.env.CHAOS_EVENTS ?? 3000);
const fuzzCount = Number(process.env.CHAOS_FUZZ ?? 500);
const produceSeconds = Number(process.env.CHAOS_SECONDS ?? 60);
const kills = Number(process.env.CHAOS_KILLS ?? 6);
const pgPort = Number(process.env.CHAOS_PG_PORT ?? 5440);
const redisPort = Number(process.env.CHAOS_REDIS_PORT ?? 6390);
const deadlineMs = Number(process.env.CHAOS_DEADLINE_MS ?? 300_000);

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

// ---- fuzzed inputs: bytes, broken JSON, wrong shapes ----
function fuzzValue(i: number, valid: string): Buffer | string | null {
  switch (i % 6) {
    case 0:
      return Buffer.from(
        Array.from({ length: 1 + Math.floor(random() * 200) }, () => Math.floor(random() * 256)),
      );
    case 1:
      return valid.slice(0, Math.floor(random() * valid.length));
    case 2:
      return JSON.stringify({ ...JSON.parse(valid), tenantId: 42 });
    case 3:
      return JSON.stringify({ ...JSON.parse(valid), schemaVersion: 99 });
    case 4:
      return "";
    default:
      return JSON.stringify([random(), "not an event"]);
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
  const setup = await benchSetup("chaos", 6, {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    KAFKA_SESSION_TIMEOUT_MS: "6000",
    HANDLER_RETRY_BASE_MS: "50",
    LOG_LEVEL: "warn",
  });
  const cli = fileURLToPath(new URL("../test/support/run-cli.ts", import.meta.url));
  const env = { ...process.env, ...setup.env, KAFKA_TRANSACTIONAL_ID: `chaos-${setup.id}` };
  execFileSync(process.execPath, ["--import", "tsx", cli, "migrate"], { env, stdio: "pipe" });
  log(
    `private postgres :${String(pgPort)} (${pgDir}), private redis :${String(redisPort)}, topics bench.${setup.id}.*`,
  );

  // What a read_committed consumer sees.
  const decisions = new Map<string, number>();
  const deadLetters = new Map<string, number>();
  const decisionCounter = await startCounter(setup.kafka, [setup.config.topics.loopDecision], (value) => {
    const id = value ? (JSON.parse(value.toString()) as { sourceEventId: string }).sourceEventId : "?";
    decisions.set(id, (decisions.get(id) ?? 0) + 1);
  });
  const dlqConsumer = setup.kafka.consumer({ groupId: `chaos-dlq-${setup.id}`, readUncommitted: false });
  await dlqConsumer.connect();
  await dlqConsumer.subscribe({ topics: [setup.config.topics.deadLetter], fromBeginning: true });
  await dlqConsumer.run({
    eachMessage: async ({ message }) => {
      const key = message.key?.toString() ?? "?";
      deadLetters.set(key, (deadLetters.get(key) ?? 0) + 1);
      await Promise.resolve();
    },
  });

  // The processor, restarted whenever it exits (as an orchestrator would).
  let child: ChildProcess | null = null;
  let running = true;
  let starts = 0;
  let unplannedExits = 0;
  let killing = false;
  function spawnProcessor(): void {
    starts += 1;
    const proc = spawn(process.execPath, ["--import", "tsx", cli, "start"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // CHAOS_LOG=<file> keeps the processors' logs (warn and above) for a post-mortem.
    for (const stream of [proc.stdout, proc.stderr]) {
      stream.on("data", (chunk: Buffer) => {
        if (process.env.CHAOS_LOG) appendFileSync(process.env.CHAOS_LOG, chunk);
      });
    }
    proc.once("exit", (code, signal) => {
      if (!killing && running) {
        unplannedExits += 1;
        log(`processor exited by itself (code ${String(code)}, signal ${String(signal)}); restarting`);
      }
      if (running && !killing) spawnProcessor();
    });
    child = proc;
  }
  async function kill9(): Promise<void> {
    const current = child;
    if (!current) return;
    killing = true;
    const exited = new Promise((resolve) => current.once("exit", resolve));
    current.kill("SIGKILL");
    await exited;
    killing = false;
    spawnProcessor();
  }
  spawnProcessor();

  // Produce valid events and fuzzed inputs interleaved, at a steady rate.
  const producer = setup.kafka.producer();
  await producer.connect();
  const tenantId = setup.tenantId;
  const total = events + fuzzCount;
  const order = Array.from({ length: total }, (_, i) => i).sort(() => random() - 0.5);
  const producing = (async () => {
    const perTick = Math.max(1, Math.ceil(total / (produceSeconds * 10)));
    for (let i = 0; i < order.length; i += perTick) {
      const messages = order.slice(i, i + perTick).map((n) => {
        if (n < events) {
          const event = benchEvent(tenantId, n, n % Math.max(1, Math.floor(events / 20)));
          return { key: event.loopId, value: JSON.stringify(event) };
        }
        const valid = JSON.stringify(benchEvent(tenantId, n, 0));
        return { key: `fuzz-${String(n)}`, value: fuzzValue(n, valid) };
      });
      await producer.send({ topic: setup.config.topics.taskCompleted, messages });
      await sleep(100);
    }
  })();

  // Chaos schedule over the production window.
  const gap = (produceSeconds * 1000) / (kills + 1);
  for (let k = 1; k <= kills; k += 1) {
    await sleep(gap * (0.6 + 0.8 * random()));
    if (k === 2) {
      log("stopping private redis (data lost: it restarts empty)");
      stopRedis();
      await sleep(4000);
      startRedis();
      log("private redis back");
    }
    if (k === 4) {
      log("stopping private postgres (immediate)");
      stopPostgres();
      await sleep(6000);
      startPostgres();
      log("private postgres back");
    }
    log(
      `kill -9 #${String(k)} (decisions so far ${String(decisions.size)}, dead letters ${String(deadLetters.size)})`,
    );
    await kill9();
  }
  await producing;
  await producer.disconnect();
  log("all input produced; waiting for the processor to account for everything");

  const until = Date.now() + deadlineMs;
  while (Date.now() < until && (decisions.size < events || deadLetters.size < fuzzCount)) await sleep(500);
  await sleep(3000); // late duplicates, if any, arrive now
  running = false;
  const last = child as ChildProcess | null;
  if (last) {
    const exited = new Promise((resolve) => last.once("exit", resolve));
    last.kill("SIGTERM");
    await exited;
  }

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const rows = await pool.query<{ total: string; distinct: string }>(
    "SELECT count(*) AS total, count(DISTINCT event_id) AS distinct FROM processed_events WHERE tenant_id = $1",
    [tenantId],
  );
  await pool.end();
  const validIds = Array.from({ length: events }, (_, i) => `evt-${tenantId}-${String(i)}`);
  const lost = validIds.filter((id) => !decisions.has(id)).length;
  const duplicateOutputs = [...decisions.values()].filter((n) => n > 1).length;
  const fuzzKeys = Array.from({ length: fuzzCount }, (_, i) => `fuzz-${String(events + i)}`);
  const fuzzLost = fuzzKeys.filter((k) => !deadLetters.has(k)).length;
  const fuzzDuplicates = [...deadLetters.values()].filter((n) => n > 1).length;
  const validDeadLettered = [...deadLetters.keys()].filter((k) => !k.startsWith("fuzz-")).length;
  const rowTotal = Number(rows.rows[0]?.total ?? 0);
  const rowDistinct = Number(rows.rows[0]?.distinct ?? 0);

  console.log("\nChaos accounting");
  console.log(
    `  processor starts ${String(starts)} (kill -9: ${String(kills)}, unplanned exits: ${String(unplannedExits)}); redis and postgres each stopped and restarted once`,
  );
  console.log(`  valid events        ${String(events)}`);
  console.log(
    `    with a committed decision   ${String(events - lost)}   lost ${String(lost)}   duplicate decisions ${String(duplicateOutputs)}`,
  );
  console.log(
    `    processed_events rows        ${String(rowTotal)}   distinct ${String(rowDistinct)}   duplicate rows ${String(rowTotal - rowDistinct)}`,
  );
  console.log(`    wrongly dead-lettered        ${String(validDeadLettered)}`);
  console.log(`  fuzzed inputs       ${String(fuzzCount)}`);
  console.log(
    `    dead-lettered                ${String(fuzzCount - fuzzLost)}   lost ${String(fuzzLost)}   duplicate dead letters ${String(fuzzDuplicates)}`,
  );
  const ok =
    lost === 0 &&
    duplicateOutputs === 0 &&
    rowTotal === events &&
    rowDistinct === events &&
    fuzzLost === 0 &&
    fuzzDuplicates === 0 &&
    validDeadLettered === 0;
  console.log(ok ? "  RESULT: every event accounted for, 0 lost, 0 duplicates" : "  RESULT: FAILED");

  await decisionCounter.stop();
  await dlqConsumer.disconnect();
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
