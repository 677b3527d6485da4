import type { AttributeValue, Attributes, OtlpSpan } from "./otlp-span.js";

/** Reading the values of spans' GenAI attributes as the task contract takes them. */

/** Control characters the contract refuses in names and ids become spaces; cut to `max`. */
export function cleanName(value: AttributeValue | undefined, max = 200): string | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const text = String(value)
    // eslint-disable-next-line no-control-regex -- removing them is the point
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .trim()
    .slice(0, max)
    .toWellFormed()
    .trim();
  return text.length > 0 ? text : undefined;
}

/** The text trimmed, or undefined when nothing is left. */
export function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim() ?? "";
  return trimmed.length > 0 ? trimmed : undefined;
}

export function text(value: AttributeValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** ISO time of a nanosecond timestamp (millisecond precision, as the contract's datetimes). */
export function isoOf(unixNano: string): string {
  return new Date(Number(BigInt(unixNano) / 1_000_000n)).toISOString();
}

/**
 * The text of GenAI messages (`gen_ai.input.messages` / `gen_ai.output.messages`: a JSON array of
 * `{role, parts: [{type: "text", content}]}`), or the value as it is when it has another shape.
 * Content is opt-in in the conventions: most spans carry none, and then there is none here.
 */
export function messagesText(value: AttributeValue | undefined, role?: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  let messages: unknown = value;
  if (typeof value === "string") {
    try {
      messages = JSON.parse(value);
    } catch {
      return value;
    }
  }
  if (!Array.isArray(messages)) return text(value);
  const texts: string[] = [];
  for (const message of messages as unknown[]) {
    if (typeof message !== "object" || message === null) continue;
    const m = message as { role?: unknown; parts?: unknown; content?: unknown };
    if (role !== undefined && m.role !== role) continue;
    if (typeof m.content === "string") texts.push(m.content);
    if (!Array.isArray(m.parts)) continue;
    for (const part of m.parts as unknown[]) {
      const p = part as { type?: unknown; content?: unknown } | null;
      if (p?.type === "text" && typeof p.content === "string") texts.push(p.content);
    }
  }
  return texts.length > 0 ? texts.join("\n") : undefined;
}

export function agentNameOf(span: OtlpSpan): string | undefined {
  return (
    cleanName(span.attributes["gen_ai.agent.name"]) ??
    cleanName(span.attributes["gen_ai.agent.id"]) ??
    cleanName(span.name.replace(/^invoke_agent\s*/, ""))
  );
}

export function resourceName(resource: Attributes, key: string): string | undefined {
  return Object.hasOwn(resource, key) ? cleanName(resource[key]) : undefined;
}
