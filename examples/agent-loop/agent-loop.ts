/**
 * An agent's loop with Reflector, over HTTP only: run the task, send the run as a trace, wait for
 * the decision; on `rerun`, take the lessons it carries (or the lessons for the task), put them in
 * the prompt and run again under the new loop id.
 *
 *   REFLECTOR_URL=http://localhost:8080 REFLECTOR_API_KEY=… npx tsx examples/agent-loop/agent-loop.ts
 *
 * It imports the client as agents install it, `@reflector/client` (clients/typescript; inside this
 * repository tsconfig.json maps the name to src/client).
 * The key needs the `decide` role (to send traces) and `read` (decisions and lessons); Reflector
 * needs OTLP_TOPIC set (POST /v1/traces feeds its OTLP bridge). The "agent" is a stand-in for a
 * model: it pages through the orders table only when its prompt tells it to, and otherwise runs
 * one unbounded query that times out.
 */
import { randomUUID } from "node:crypto";
import {
  createReflectorClient,
  lessonsPrompt,
  ReflectorApiError,
  type AgentRun,
  type Lesson,
  type LoopDecision,
} from "@reflector/client";

const client = createReflectorClient({
  baseUrl: process.env.REFLECTOR_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.REFLECTOR_API_KEY ?? "",
});
const task = "Export last quarter's orders with their line items for the churn analysis";
const tools = ["postgres_query"];
const timeoutMs = Number(process.env.TIMEOUT_MS ?? 120_000);

/** The stand-in model: what it does depends only on its prompt. */
function runAgent(prompt: string): Omit<AgentRun, "loopId" | "agent" | "task"> {
  const bounded = /\b(LIMIT|paginat\w*|pages?|batch\w*|bounded)\b/i.test(prompt);
  const query = bounded
    ? "SELECT o.id, li.sku FROM orders o JOIN order_line_items li ON li.order_id = o.id WHERE o.created_at >= '2026-07-01' AND o.id > $1 ORDER BY o.id LIMIT 1000"
    : "SELECT * FROM orders o JOIN order_line_items li ON li.order_id = o.id WHERE o.created_at >= '2026-07-01'";
  const plan = { kind: "llm" as const, name: "gpt-4o", input: prompt, output: query };
  if (bounded) {
    return {
      steps: [plan, { kind: "tool", name: "postgres_query", input: query, output: "48 pages of 1000 rows" }],
      answer: "Exported 47,812 orders in 48 pages.",
    };
  }
  const error = {
    type: "query_timeout",
    message: "canceling statement due to statement timeout after 30000 ms (Seq Scan on order_line_items)",
  };
  return {
    steps: [plan, { kind: "tool", name: "postgres_query", input: query, error }],
    error: { type: "tool_error", message: "the export query timed out" },
  };
}

/** The lessons for the rerun: those the decision carries, else those for the task. */
async function lessonsFor(decision: LoopDecision): Promise<Lesson[]> {
  try {
    // The rerun's loop id: the lessons served are remembered for it, and its outcome counts for them.
    return await client.lessonsForRerun(decision, { task, tools, loopId: decision.newLoopId ?? undefined });
  } catch (err) {
    // A Reflector without lessons for a task (before that endpoint): the lessons about the tool.
    if (!(err instanceof ReflectorApiError) || err.status !== 404) throw err;
    const { items } = await client.listReflections({ q: tools[0] ?? "", limit: 3 });
    return items.map((item) => {
      const strategyText = item.strategyText ?? "";
      return { reflectionId: item.id, strategyText, adjustments: [], prompt: strategyText };
    });
  }
}

let loopId = process.env.LOOP_ID ?? `orders-export-${randomUUID().slice(0, 8)}`;
let lessons: Lesson[] = [];
for (let attempt = 1; attempt <= 3; attempt += 1) {
  const prompt = [lessonsPrompt(lessons), `Task: ${task}`].filter(Boolean).join("\n\n");
  const run = runAgent(prompt);
  console.log(
    `attempt ${String(attempt)} (loop ${loopId}): ${run.error ? `failed — ${run.error.message}` : "succeeded"}`,
  );
  await client.sendRun({ loopId, agent: "orders-exporter", task, ...run });
  const decision = await client.waitForDecision(loopId, { timeoutMs });
  console.log(`decision: ${decision.decision}${decision.reason ? ` (${decision.reason})` : ""}`);
  if (decision.decision !== "rerun" || decision.newLoopId === null) {
    process.exitCode = run.error ? 1 : 0;
    break;
  }
  lessons = await lessonsFor(decision);
  if (lessons.length === 0) {
    console.log("no lesson to apply: stopping");
    process.exitCode = 1;
    break;
  }
  console.log(`lessons for the rerun:\n${lessons.map((l) => `  - ${l.prompt}`).join("\n")}`);
  loopId = decision.newLoopId;
}
