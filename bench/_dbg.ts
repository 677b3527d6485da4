import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { buildLlm } from "../src/builders.js";
import { loadConfig } from "../src/config/config.js";
import { locateFailure } from "../src/domain/attribution/attribute-failure.js";
import { actionKey } from "../src/domain/memory/action-key.js";
import { loadRealFailures } from "./real-logs/real-logs.js";
const { embedder } = buildLlm(loadConfig({}));
const fs = loadRealFailures("/work/data").filter((f) => f.source === "tau-bench/airline" && f.split === "tune");
const st = createFakeStore();
const p = createOfflineProcessor({ store: st.store, index: createFakeIndex().index }, { embedder });
const rows: string[] = [];
for (const f of fs) {
  const r = await p.process(f.event);
  const o = r.outputs.find((x) => x.role !== "loopDecision")?.value as any;
  const l = locateFailure(f.event);
  rows.push([f.taskKey, f.id.split("/").pop(), o.verdict, o.memory?.action, o.memory?.signatureLevel, o.memory?.similarity?.toFixed(2), o.reflectionId?.slice(-6), l.basis, actionKey(f.event, l.stepIndex === undefined ? undefined : f.event.events[l.stepIndex])?.slice(0, 110)].join(" "));
}
console.log(rows.sort((a, b) => a.localeCompare(b, "en", { numeric: true })).join("\n"));
