import { text } from "node:stream/consumers";
import pg from "pg";
import { z } from "zod";
import { createHashingEmbedder } from "../adapters/embedding/hashing-embedder.js";
import { createPgReflectionStore } from "../adapters/postgres/pg-reflection-store.js";
import { ConfigError, loadConfig } from "../config/config.js";
import { ScoreInput, scoreReflection } from "./score.js";

/** `reflector score`: stdin JSON in, RT-010 judgement out. Exit 0 scored, 2 bad input. */
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

  let pool: pg.Pool | null = null;
  try {
    let history = null;
    if (tenantId) {
      const config = loadConfig(process.env);
      pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
      history = { tenantId, store: createPgReflectionStore(pool) };
    }
    const result = await scoreReflection(parsed.data, { embedder: createHashingEmbedder(), history });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`reflector score: ${err.message}\n`);
      return 2;
    }
    throw err;
  } finally {
    await pool?.end();
  }
}
