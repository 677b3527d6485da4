import { createApp, type AppOverrides } from "./app.js";
import type { Config } from "./config/config.js";
import type { Logger } from "./observability/logger.js";

/**
 * Runs the processor until SIGTERM/SIGINT (graceful stop, exit 0) or a consumer crash
 * (stop what can be stopped, exit 1 so the orchestrator restarts from committed offsets).
 */
export async function runProcessor(
  config: Config,
  logger: Logger,
  overrides: AppOverrides = {},
): Promise<void> {
  const app = createApp(config, logger, overrides);
  let exiting = false;
  const exit = async (code: number, why: string) => {
    if (exiting) return;
    exiting = true;
    logger.info({ why }, "stopping");
    await app.stop();
    process.exitCode = code;
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void exit(0, signal));
  }
  try {
    await app.start();
  } catch (err) {
    logger.error({ err }, "start-up failed");
    await exit(1, "start-up failed");
    return;
  }
  app.onCrash((error) => {
    logger.error({ err: error }, "consumer crashed");
    void exit(1, "consumer crashed");
  });
}
