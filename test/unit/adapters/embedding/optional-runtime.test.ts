import { describe, expect, it } from "vitest";
import {
  createLocalEmbedder,
  onnxRuntimeInstalled,
} from "../../../../src/adapters/embedding/local-embedder.js";
import { ReflectorError } from "../../../../src/domain/errors.js";

describe("ONNX Runtime, an optional dependency", () => {
  it("is found in a full install", () => {
    expect(onnxRuntimeInstalled()).toBe(true);
  });

  it("absent, the local embedder refuses at start-up with how to install it or what to use instead", () => {
    const build = () =>
      createLocalEmbedder({ modelDir: "/nowhere/all-minilm-l6-v2", runtimeInstalled: () => false });
    expect(build).toThrow(ReflectorError);
    expect(build).toThrow(/onnxruntime-node.*npm install onnxruntime-node.*REFLECTOR_EMBEDDINGS/s);
    // Present, the same call gets as far as the model's files.
    expect(() =>
      createLocalEmbedder({ modelDir: "/nowhere/all-minilm-l6-v2", runtimeInstalled: () => true }),
    ).toThrow(/local embedding model not found/);
  });
});
