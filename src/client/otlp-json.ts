/**
 * An agent's run as an OTLP/JSON trace export under the OpenTelemetry GenAI conventions: what an
 * instrumented agent's exporter would send, for agents that have no OpenTelemetry SDK at hand.
 */

export interface AgentStep {
  kind: "llm" | "tool";
  /** The tool's name, or the model's. */
  name: string;
  /** The prompt, or the tool's arguments. */
  input?: string;
  /** The model's answer, or the tool's result. */
  output?: string;
  /** The step failed: its error type and message. */
  error?: { type: string; message: string };
}

export interface AgentRun {
  /** The loop the run belongs to: a rerun reports under the `newLoopId` of the decision. */
  loopId: string;
  agent: string;
  /** What the agent was asked to do (the user's message). */
  task: string;
  answer?: string;
  steps: AgentStep[];
  /** The run failed: its error type and message (else it succeeded). */
  error?: { type: string; message: string };
  /** The project (resource `reflector.project_id`); default: the agent's name. */
  projectId?: string;
  /** When the run started (default: now less a millisecond per step). */
  startedAt?: Date;
}

type AnyValue = { stringValue: string } | { intValue: string };
interface KeyValue {
  key: string;
  value: AnyValue;
}

function hex(bytes: number): string {
  const values = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(values);
  return [...values].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const attr = (key: string, value: string): KeyValue => ({ key, value: { stringValue: value } });
const messages = (role: string, text: string) =>
  JSON.stringify([{ role, parts: [{ type: "text", content: text }] }]);

/** One OTLP/JSON export request holding the run as one trace; returns it with its trace id. */
export function otlpJsonOfRun(run: AgentRun): { request: object; traceId: string } {
  const traceId = hex(16);
  const rootId = hex(8);
  const startMs = run.startedAt?.getTime() ?? Date.now() - 2 * (run.steps.length + 1);
  const nanos = (ms: number) => (BigInt(ms) * 1_000_000n).toString();
  const failed = (error: { type: string; message: string } | undefined) =>
    error
      ? {
          status: { code: 2, message: error.message },
          events: [
            {
              name: "exception",
              timeUnixNano: "",
              attributes: [attr("exception.type", error.type), attr("exception.message", error.message)],
            },
          ],
          errorType: [attr("error.type", error.type)],
        }
      : { status: { code: 1, message: "" }, events: [], errorType: [] };

  const spans = run.steps.map((step, i) => {
    const at = startMs + 1 + 2 * i;
    const f = failed(step.error);
    const attributes =
      step.kind === "llm"
        ? [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.request.model", step.name),
            ...(step.input !== undefined
              ? [attr("gen_ai.input.messages", messages("user", step.input))]
              : []),
            ...(step.output !== undefined
              ? [attr("gen_ai.output.messages", messages("assistant", step.output))]
              : []),
          ]
        : [
            attr("gen_ai.operation.name", "execute_tool"),
            attr("gen_ai.tool.name", step.name),
            ...(step.input !== undefined ? [attr("gen_ai.tool.call.arguments", step.input)] : []),
            ...(step.output !== undefined ? [attr("gen_ai.tool.call.result", step.output)] : []),
          ];
    return {
      traceId,
      spanId: hex(8),
      parentSpanId: rootId,
      name: step.kind === "llm" ? `chat ${step.name}` : `execute_tool ${step.name}`,
      kind: 1,
      startTimeUnixNano: nanos(at),
      endTimeUnixNano: nanos(at + 1),
      attributes: [...attributes, ...f.errorType],
      events: f.events.map((e) => ({ ...e, timeUnixNano: nanos(at + 1) })),
      status: f.status,
    };
  });
  const endMs = startMs + 2 * (run.steps.length + 1);
  const rootFailure = failed(run.error);
  const root = {
    traceId,
    spanId: rootId,
    name: `invoke_agent ${run.agent}`,
    kind: 1,
    startTimeUnixNano: nanos(startMs),
    endTimeUnixNano: nanos(endMs),
    attributes: [
      attr("gen_ai.operation.name", "invoke_agent"),
      attr("gen_ai.agent.name", run.agent),
      attr("gen_ai.conversation.id", run.loopId),
      attr("gen_ai.input.messages", messages("user", run.task)),
      ...(run.answer !== undefined
        ? [attr("gen_ai.output.messages", messages("assistant", run.answer))]
        : []),
      ...rootFailure.errorType,
    ],
    events: [],
    status: rootFailure.status,
  };
  const request = {
    resourceSpans: [
      {
        resource: {
          attributes: [
            attr("service.name", run.agent),
            ...(run.projectId !== undefined ? [attr("reflector.project_id", run.projectId)] : []),
          ],
        },
        scopeSpans: [{ scope: { name: "reflector-client" }, spans: [root, ...spans] }],
      },
    ],
  };
  return { request, traceId };
}
