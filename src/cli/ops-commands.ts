import type { Command } from "commander";

/** Operator commands (consumer lag, DLQ replay). Owned by the operations work (issue 6). */
export function registerOpsCommands(_program: Command): void {
  // commands are added here
}
