import { z } from "zod";

/** A flag: `true`/`1` or `false`/`0`. */
export const boolFlag = z
  .enum(["true", "false", "1", "0"])
  .transform((value) => value === "true" || value === "1");

/** An empty variable means "not set": shells and compose files export them that way. */
export function presentOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== "",
    ),
  );
}

/** A Kafka topic name. */
export const topicName = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,249}$/, "letters, digits, '.', '_' and '-' only");

/** Every problem with the configuration, listed at once. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/** `value` and everything in it made read-only. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
