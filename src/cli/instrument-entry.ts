import { loadTracingConfig } from "../config/config.js";
import { instrumentLibraries } from "../observability/tracing.js";

/** The commands whose work is traced: the processor. */
const tracedCommands = new Set(["start"]);

/**
 * Run by the entry point before it imports the CLI: tracing hooks the libraries it traces (pg,
 * ioredis, fetch), which only works if they are not loaded yet. Does nothing unless the command is
 * traced and an OTLP endpoint is configured; `configOrExit` reports a malformed tracing setting.
 */
export async function instrumentEntry(argv: readonly string[], env: Record<string, string | undefined>) {
  if (!tracedCommands.has(argv[2] ?? "")) return false;
  return instrumentLibraries(loadTracingConfig(env));
}
