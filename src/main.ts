import { createApp, type AppOverrides } from "./composition/app.js";
import { createOtlpBridgeApp } from "./composition/otlp-bridge-app.js";
import type { Config } from "./config/config.js";
import type { Logger } from "./observability/logger.js";
import { startTracing } from "./observability/tracing.js";

/** After a stop, the process must be gone within this long even if a client leaves a handle open. */
const exitGraceMs = 5_000;
/** How long the spans still buffered at stop may take to export (within the exit grace period). */
const tracingFlushMs = 2_000;

/**
 * Runs the processor until SIGTERM/SIGINT (graceful stop, exit 0) or a consumer crash
 * (stop what can be stopped, exit 1 so the orchestrator restarts from committed offsets).
 */
export async function runProcessor(
  config: Config,
  logger: Logger,
  overrides: AppOverrides = {},
): Promise<void> {
  // Before any client is built; a no-op without OTEL_EXPORTER_OTLP_ENDPOINT.
  const tracing = await startTracing(config.tracing, logger);
  let app: ReturnType<typeof createApp>;
  try {
    // Wiring opens no connection, so a failure here (a missing embedding model) leaves nothing to close.
    app = createApp(config, logger, tracing.enabled ? { tracer: tracing.tracer, ...overrides } : overrides);
  } catch (err) {
    logger.error({ err }, "start-up failed");
    await tracing.shutdown(tracingFlushMs);
    process.exitCode = 1;
    return;
  }
  await runUntilStopped(app, logger, {
    crashed: "consumer crashed",
    afterStop: () => tracing.shutdown(tracingFlushMs),
  });
}

/**
 * `npx reflector otlp-bridge`: the OTLP bridge alone until SIGTERM/SIGINT (exit 0) or a crash of
 * its consumer (exit 1, to be restarted from the committed offsets).
 */
export async function runOtlpBridge(config: Config, logger: Logger): Promise<void> {
  await runUntilStopped(createOtlpBridgeApp(config, logger), logger, { crashed: "otlp consumer crashed" });
}

/** What `runUntilStopped` runs: the processor's app or the bridge's. */
interface Runnable {
  start(): Promise<unknown>;
  stop(): Promise<unknown>;
  onCrash(listener: (error: Error) => void): void;
}

/**
 * Starts `app` and stops it on SIGTERM/SIGINT (exit 0), a failed start or a crash (exit 1, so the
 * orchestrator restarts it from the committed offsets). `afterStop` flushes what must leave
 * before exit; false means it could not, and the process exits at once.
 */
async function runUntilStopped(
  app: Runnable,
  logger: Logger,
  options: { crashed: string; afterStop?: () => Promise<boolean> },
): Promise<void> {
  let exiting = false;
  let starting: Promise<unknown> = Promise.resolve();
  const exit = async (code: number, why: string) => {
    if (exiting) return;
    exiting = true;
    logger.info({ why }, "stopping");
    // A signal during start-up waits for start to settle: stopping half-started clients would let
    // the rest of start connect them again after "stopped".
    await starting.catch(() => undefined);
    await app.stop();
    const flushed = options.afterStop ? await options.afterStop() : true;
    process.exitCode = code;
    // Everything else is closed; an export still retrying against a collector that is down would
    // only hold the process until the grace period below.
    if (!flushed) process.exit(code);
    // Everything is committed and closed; a handle some client forgot must not keep the pod
    // alive past its termination grace period. unref: a clean exit does not wait for this.
    setTimeout(() => {
      logger.warn({ graceMs: exitGraceMs }, "handles still open after stop; exiting");
      process.exit(code);
    }, exitGraceMs).unref();
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void exit(0, signal));
  }
  starting = app.start();
  try {
    await starting;
  } catch (err) {
    logger.error({ err }, "start-up failed");
    // A no-op when a signal has already begun the stop.
    await exit(1, "start-up failed");
    return;
  }
  app.onCrash((error) => {
    logger.error({ err: error }, options.crashed);
    void exit(1, options.crashed);
  });
}
