import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layerViolations, removeProbeTree, writeProbeTree } from "../../support/layer-probes.js";

/**
 * The rules that keep files in their rooms (.dependency-cruiser.mjs), proved on a throw-away tree:
 * each old place of a moved file or port fails, and its new place passes.
 */
const roomRules = [
  "pipeline-stages-stay-inside",
  "pipeline-holds-no-kafka-only-module",
  "features-stay-above-the-stores",
  "the-old-root-entries-only-re-export",
  "only-the-composition-root-builds-adapters",
];

const uses = (...paths: string[]) =>
  paths
    .map((p, i) => `import * as m${String(i)} from "${p}";\nexport const u${String(i)} = m${String(i)};\n`)
    .join("");
const leaf = "export const x = 1;\n";

const probes: Record<string, string> = {
  // Where things live now: passes.
  "src/pipeline/ports.ts": leaf,
  "src/pipeline/stages/reflect.ts": uses("../ports.js"),
  "src/pipeline/task-processor.ts": uses("./stages/reflect.js"),
  "src/observability/quality-metrics.ts": uses("../pipeline/ports.js"),
  "src/adapters/kafka/failure-policy.ts": leaf,
  "src/adapters/kafka/retry-loop.ts": uses("./failure-policy.js", "../../pipeline/ports.js"),
  "src/features/api-context.ts": leaf,
  "src/features/loops/loop-routes.ts": uses("../api-context.js"),
  "src/composition/app.ts": uses("../adapters/kafka/retry-loop.js", "../pipeline/task-processor.js"),
  "src/main.ts": uses("./composition/app.js"),
  "src/app.ts": uses("./composition/app.js"),
  // The old places: each fails.
  "src/observability/stage-port.ts": uses("../pipeline/stages/reflect.js"),
  "src/pipeline/ordered-scheduler.ts": leaf,
  "src/adapters/kafka/batch-pump.ts": uses("../../pipeline/ordered-scheduler.js"),
  "src/http/api-context.ts": leaf,
  "src/features/lessons/lesson-routes.ts": uses("../../http/api-context.js"),
  "src/cli/demo.ts": uses("../app.js"),
  "src/builders.ts": uses("./adapters/kafka/failure-policy.js"),
};

let root = "";

beforeAll(() => {
  root = writeProbeTree(probes);
});

afterAll(() => {
  removeProbeTree(root);
});

describe("files stay in their rooms (.dependency-cruiser.mjs)", () => {
  it("fails each moved file or port at its old place, and only there", async () => {
    const found = (await layerViolations(root))
      .filter((v) => roomRules.includes(v.rule.name))
      .map((v) => `${v.rule.name}: ${v.from}`)
      .sort();
    expect(found).toEqual(
      [
        "pipeline-stages-stay-inside: src/observability/stage-port.ts",
        "pipeline-holds-no-kafka-only-module: src/pipeline/ordered-scheduler.ts",
        "features-stay-above-the-stores: src/features/lessons/lesson-routes.ts",
        "the-old-root-entries-only-re-export: src/cli/demo.ts",
        "only-the-composition-root-builds-adapters: src/builders.ts",
      ].sort(),
    );
  }, 120_000);
});
