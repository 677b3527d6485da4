/**
 * Cost of one consumer-lag refresh (what the lag poller does every LAG_REFRESH_MS and what
 * `reflector lag` does once), against the real broker: `npx tsx bench/lag-refresh.ts [partitions]`.
 * Caught up, no time-index probes are needed; with lag on every partition, 16 probes per topic.
 */
import { createLogOffsetsReader } from "../src/adapters/kafka/log-offsets.js";
import { readConsumerLag } from "../src/adapters/kafka/admin/consumer-lag.js";
import { benchSetup } from "./support.js";

const partitions = Number(process.argv[2] ?? "6");
const rounds = 50;
const setup = await benchSetup("lag", partitions);
const topic = setup.config.topics.taskCompleted;
const group = setup.config.kafka.groupId;
const producer = setup.kafka.producer();
await producer.connect();
for (let p = 0; p < partitions; p += 1) {
  await producer.send({
    topic,
    messages: Array.from({ length: 100 }, (_, i) => ({ partition: p, value: `m${String(i)}` })),
  });
}
await producer.disconnect();
const admin = setup.kafka.admin();
await admin.connect();
const reader = createLogOffsetsReader(setup.kafka);
const options = {
  logOffsets: (t: string) => reader.offsets(t),
  groupId: group,
  topics: [topic],
  fromBeginning: true,
};

async function measure(label: string): Promise<void> {
  await readConsumerLag(admin, options);
  const ms: number[] = [];
  let lagging = 0;
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    const rows = await readConsumerLag(admin, options);
    ms.push(performance.now() - started);
    lagging = rows.filter((r) => r.pending > 0).length;
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => (ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0).toFixed(1);
  console.log(
    `${label}: ${String(partitions)} partitions, ${String(lagging)} lagging, ${String(rounds)} refreshes: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`,
  );
}

await measure("all pending (nothing committed)");
await admin.setOffsets({
  groupId: group,
  topic,
  partitions: Array.from({ length: partitions }, (_, p) => ({ partition: p, offset: "100" })),
});
await measure("caught up");
await admin.disconnect();
await reader.close();
