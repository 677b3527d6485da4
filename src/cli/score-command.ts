import { text } from "node:stream/consumers";
import { z } from "zod";
import { buildLlm, buildPostgresPool, buildReflectionStore } from "../composition/builders.js";
import { ReflectorError } from "../domain/errors.js";
import { ConfigError, loadConfig } from "../config/config.js";
import { buildQualityConfig } from "../composition/quality-config.js";
import { ScoreInput, scoreReflection } from "./score.js";

/** `reflector score`: stdin JSON in, quality judgement out. Exit 0 scored, 2 bad input. */
export async function runScoreCommand(tenantId: string | undefined): Promise<number> {
  const raw = await text(process.stdin);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    process.stderr.write(`reflector score: stdin is not JSON: ${(err as Error).message}\n`);
    return 2;
  }
  const parsed = ScoreInput.safeParse(json);
  if (!parsed.success) {
    process.stderr.write(`reflector score: invalid input:\n${z.prettifyError(parsed.error)}\n`);
    return 2;
  }

  let pool: ReturnType<typeof buildPostgresPool> | null = null;
  try {
    // The judge the processor would run: the configured embedder (the local model by default).
    const config = loadConfig(process.env);
    const { embedder, causeJudge } = buildLlm(config);
    let history = null;
    if (tenantId) {
      pool = buildPostgresPool(config, { max: 2 });
      history = { tenantId, store: buildReflectionStore(pool, embedder) };
    }
    const quality = buildQualityConfig(config);
    const result = await scoreReflection(parsed.data, {
      embedder,
      history,
      quality,
      memory: config.memory,
      causeJudge,
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`reflector score: ${err.message}\n`);
      return 2;
    }
    // The embedding model not fetched yet, the model endpoint down or refusing: a line that says
    // what to do, not a stack trace.
    if (err instanceof ReflectorError) {
      process.stderr.write(`reflector score: ${err.code}: ${err.message}\n`);
      return err.code === "CONFIG_INVALID" ? 2 : 1;
    }
    throw err;
  } finally {
    await pool?.end();
  }
}
