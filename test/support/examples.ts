import { readdirSync, readFileSync } from "node:fs";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";

const dir = new URL("../../examples/", import.meta.url);

/** The demo's example traces, by file-name prefix ("01", "06", …). */
export function exampleEvents(prefix: string): TaskCompleted[] {
  const file = readdirSync(dir).find((f) => f.startsWith(`${prefix}-`));
  if (!file) throw new Error(`no example ${prefix}`);
  return (JSON.parse(readFileSync(new URL(file, dir), "utf8")) as { events: TaskCompleted[] }).events;
}

export function exampleEvent(prefix: string, step = 0): TaskCompleted {
  const event = exampleEvents(prefix)[step];
  if (!event) throw new Error(`example ${prefix} has no step ${step}`);
  return event;
}
