import type { Command } from "commander";

/** Maintenance commands (dreaming, pruning). Owned by the modes and maintenance work (issue 4). */
export function registerMaintenanceCommands(_program: Command): void {
  // commands are added here
}
