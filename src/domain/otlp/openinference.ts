import type { AttributeValue, Attributes, OtlpSpan } from "./otlp-span.js";

/**
 * Spans in the OpenInference conventions (`openinference.span.kind`, `llm.*`, `tool.*`,
 * `input.value`, …; emitted by the instrumentations of LangChain, LlamaIndex, DSPy, the OpenAI
 * Agents SDK and others) read as their GenAI (`gen_ai.*`) equivalents, so one mapping serves both.
 * A `gen_ai.*` attribute a span already carries is never replaced.
 */

/** The GenAI operation of each OpenInference kind that has one; the others map to plain steps. */
const operationOfKind: Readonly<Record<string, string>> = {
  LLM: "chat",
  TOOL: "execute_tool",
  AGENT: "invoke_agent",
};

function stringOf(value: AttributeValue | undefined): string | undefined {
  if (typeof value === "string") return value.trim().length > 0 ? value : undefined;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === undefined || value === null) return undefined;
  return JSON.stringify(value);
}

function numberOf(value: AttributeValue | undefined): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value);
  return undefined;
}

interface Message {
  role: string;
  parts: { type: "text"; content: string }[];
}

/** One message's text: its content, its content parts, and the tool calls it makes. */
function messageOf(fields: ReadonlyMap<string, AttributeValue>): Message | null {
  const parts: string[] = [];
  const content = stringOf(fields.get("content"));
  if (content !== undefined) parts.push(content);
  const indexed = (pattern: RegExp) =>
    [...fields]
      .map(([key, value]) => ({ match: pattern.exec(key), value }))
      .filter((f): f is { match: RegExpExecArray; value: AttributeValue } => f.match !== null)
      .sort((a, b) => Number(a.match[1]) - Number(b.match[1]));
  for (const { value } of indexed(/^contents\.(\d+)\.message_content\.text$/)) {
    const text = stringOf(value);
    if (text !== undefined) parts.push(text);
  }
  const calls = new Map<number, { name?: string; args?: string }>();
  for (const { match, value } of indexed(/^tool_calls\.(\d+)\.tool_call\.function\.(name|arguments)$/)) {
    const call = calls.get(Number(match[1])) ?? {};
    if (match[2] === "name") call.name = stringOf(value);
    else call.args = stringOf(value);
    calls.set(Number(match[1]), call);
  }
  for (const call of calls.values()) parts.push(`tool call: ${call.name ?? "?"}(${call.args ?? ""})`);
  if (parts.length === 0) return null;
  return {
    role: stringOf(fields.get("role")) ?? "user",
    parts: parts.map((text) => ({ type: "text", content: text })),
  };
}

/**
 * `llm.input_messages` / `llm.output_messages`, flattened as the conventions export them
 * (`<prefix>.<i>.message.role`, `.content`, `.contents.<j>.message_content.text`, `.tool_calls.…`),
 * as the JSON of `gen_ai.*.messages`; undefined when the span has none.
 */
export function messagesOf(attributes: Attributes, prefix: string): string | undefined {
  const byIndex = new Map<number, Map<string, AttributeValue>>();
  const start = `${prefix}.`;
  for (const [key, value] of Object.entries(attributes)) {
    if (!key.startsWith(start)) continue;
    const match = /^(\d+)\.message\.(.+)$/.exec(key.slice(start.length));
    if (!match) continue;
    const index = Number(match[1]);
    const fields = byIndex.get(index) ?? new Map<string, AttributeValue>();
    fields.set(match[2] ?? "", value);
    byIndex.set(index, fields);
  }
  const messages = [...byIndex]
    .sort(([a], [b]) => a - b)
    .map(([, fields]) => messageOf(fields))
    .filter((m): m is Message => m !== null);
  return messages.length > 0 ? JSON.stringify(messages) : undefined;
}

/** A lone text as a one-message `gen_ai.*.messages` JSON, from the given role. */
function oneMessage(value: AttributeValue | undefined, role: string): string | undefined {
  const text = stringOf(value);
  return text === undefined
    ? undefined
    : JSON.stringify([{ role, parts: [{ type: "text", content: text }] }]);
}

/** The number of documents a RETRIEVER span returned (`retrieval.documents.<i>.document.*`). */
function retrievedCount(attributes: Attributes): number {
  const indices = new Set<string>();
  for (const key of Object.keys(attributes)) {
    const match = /^retrieval\.documents\.(\d+)\./.exec(key);
    if (match?.[1] !== undefined) indices.add(match[1]);
  }
  return indices.size;
}

/** The span with the GenAI attributes its OpenInference attributes say (itself when it has none). */
export function withOpenInference(span: OtlpSpan): OtlpSpan {
  const a = span.attributes;
  const kindValue = a["openinference.span.kind"];
  if (typeof kindValue !== "string") return span;
  const kind = kindValue.trim().toUpperCase();
  const added: Attributes = {};
  const set = (key: string, value: AttributeValue | undefined) => {
    if (value !== undefined && !Object.hasOwn(a, key) && !Object.hasOwn(added, key)) added[key] = value;
  };
  set("gen_ai.operation.name", operationOfKind[kind]);
  set("gen_ai.conversation.id", stringOf(a["session.id"]));
  switch (kind) {
    case "LLM":
      set("gen_ai.request.model", stringOf(a["llm.model_name"]));
      set("gen_ai.provider.name", stringOf(a["llm.provider"]) ?? stringOf(a["llm.system"]));
      set("gen_ai.usage.input_tokens", numberOf(a["llm.token_count.prompt"]));
      set("gen_ai.usage.output_tokens", numberOf(a["llm.token_count.completion"]));
      set(
        "gen_ai.input.messages",
        messagesOf(a, "llm.input_messages") ?? oneMessage(a["input.value"], "user"),
      );
      set(
        "gen_ai.output.messages",
        messagesOf(a, "llm.output_messages") ?? oneMessage(a["output.value"], "assistant"),
      );
      break;
    case "TOOL":
      set("gen_ai.tool.name", stringOf(a["tool.name"]) ?? stringOf(span.name));
      set("gen_ai.tool.call.arguments", stringOf(a["tool.parameters"]) ?? stringOf(a["input.value"]));
      set("gen_ai.tool.call.result", stringOf(a["output.value"]));
      break;
    case "AGENT":
      set("gen_ai.agent.name", stringOf(a["agent.name"]) ?? stringOf(span.name));
      set("gen_ai.input.messages", oneMessage(a["input.value"], "user"));
      set("gen_ai.output.messages", oneMessage(a["output.value"], "assistant"));
      break;
    default:
      // CHAIN, RETRIEVER, EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR: a plain step; as a trace's
      // root (a framework's run is often a CHAIN) its input is the task and its output the answer.
      set("gen_ai.input.messages", oneMessage(a["input.value"], "user"));
      set("gen_ai.output.messages", oneMessage(a["output.value"], "assistant"));
  }
  return Object.keys(added).length === 0 ? span : { ...span, attributes: { ...a, ...added } };
}

/**
 * The text of a step that is no GenAI operation (an OpenInference CHAIN, RETRIEVER, …): its name,
 * then what went in and came out when the span says. Other spans: their name.
 */
export function plainStepText(span: OtlpSpan): string {
  const a = span.attributes;
  const name = span.name || "span";
  if (typeof a["openinference.span.kind"] !== "string") return name;
  const kind = a["openinference.span.kind"].trim().toUpperCase();
  const documents = kind === "RETRIEVER" ? retrievedCount(a) : 0;
  const input = stringOf(a["input.value"]);
  const output = stringOf(a["output.value"]);
  return [
    `${name} (${kind.toLowerCase()})`,
    input !== undefined ? `input: ${input}` : undefined,
    output !== undefined ? `→ ${output}` : undefined,
    documents > 0 ? `→ ${String(documents)} documents retrieved` : undefined,
  ]
    .filter((t) => t !== undefined)
    .join("\n");
}
