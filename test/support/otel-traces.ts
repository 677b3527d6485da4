import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";

/**
 * Spans made by the OpenTelemetry JS SDK under the GenAI semantic conventions, and the bytes an
 * OTLP exporter (the Collector's Kafka exporter among them) writes for them: what the bridge reads
 * in production, made here by the same code.
 */
export interface SdkTracer {
  tracer: Tracer;
  exporter: InMemorySpanExporter;
  finished(): ReadableSpan[];
  shutdown(): Promise<void>;
}

export function sdkTracer(resource: Record<string, string>): SdkTracer {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("test-agents", "1.0.0");
  return {
    tracer,
    exporter,
    finished: () => exporter.getFinishedSpans(),
    shutdown: () => provider.shutdown(),
  };
}

export type OtlpEncoding = "json" | "protobuf";

/** One `ExportTraceServiceRequest` with these spans, as the SDK's own serializers write it. */
export function serialize(spans: ReadableSpan[], encoding: OtlpEncoding): Buffer {
  const bytes =
    encoding === "json"
      ? JsonTraceSerializer.serializeRequest(spans)
      : ProtobufTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new Error("the serializer returned nothing");
  return Buffer.from(bytes);
}

const child = (parent: Span) => trace.setSpan(context.active(), parent);

/** Nanosecond clock for spans: every span gets its own millisecond, so the order is certain. */
function clock(startMs: number) {
  let ms = startMs;
  return () => {
    ms += 1;
    return new Date(ms);
  };
}

export interface MultiAgentRun {
  /** The trace id (32 hex digits). */
  traceId: string;
  conversationId: string | undefined;
}

/**
 * A multi-agent run: an orchestrator plans with a model, hands research to a sub-agent (whose web
 * search succeeds), then calls a SQL tool that times out with an exception, and fails. `options`
 * leaves out the root span (a run whose root never ends) or the conversation id.
 */
export function runMultiAgentTask(
  tracer: Tracer,
  options: { conversationId?: string; withRoot?: boolean; startMs?: number } = {},
): MultiAgentRun {
  const now = clock(options.startMs ?? Date.UTC(2026, 10, 24, 12, 0, 0));
  const root = tracer.startSpan(
    "invoke_agent orchestrator",
    {
      kind: SpanKind.INTERNAL,
      startTime: now(),
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "orchestrator",
        ...(options.conversationId ? { "gen_ai.conversation.id": options.conversationId } : {}),
        "gen_ai.input.messages": JSON.stringify([
          {
            role: "user",
            parts: [{ type: "text", content: "Which customers churned last quarter and why?" }],
          },
        ]),
      },
    },
    context.active(),
  );
  const plan = tracer.startSpan(
    "chat gpt-4o",
    {
      kind: SpanKind.CLIENT,
      startTime: now(),
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 412,
        "gen_ai.usage.output_tokens": 96,
      },
    },
    child(root),
  );
  plan.end(now());

  const researcher = tracer.startSpan(
    "invoke_agent researcher",
    {
      startTime: now(),
      attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher" },
    },
    child(root),
  );
  const search = tracer.startSpan(
    "execute_tool web_search",
    {
      startTime: now(),
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "web_search",
        "gen_ai.tool.call.arguments": '{"query":"churn drivers SaaS 2026"}',
        "gen_ai.tool.call.result": "3 articles on pricing changes",
      },
    },
    child(researcher),
  );
  search.end(now());
  researcher.end(now());

  const sql = tracer.startSpan(
    "execute_tool postgres_query",
    {
      startTime: now(),
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "postgres_query",
        "gen_ai.tool.call.arguments": "SELECT customer_id FROM churn WHERE quarter = '2026Q3'",
      },
    },
    child(root),
  );
  const timeout = new Error("Query execution exceeded 30s limit");
  timeout.name = "QueryTimeoutError";
  sql.recordException(timeout, now());
  sql.setAttribute("error.type", "query_timeout");
  sql.setStatus({ code: SpanStatusCode.ERROR, message: "Query execution exceeded 30s limit" });
  sql.end(now());

  root.setAttribute("error.type", "tool_error");
  root.setStatus({ code: SpanStatusCode.ERROR, message: "could not answer: the churn query failed" });
  const traceId = root.spanContext().traceId;
  // A root that never ends is never exported: the run crashed before it finished.
  if (options.withRoot !== false) root.end(now());
  return { traceId, conversationId: options.conversationId };
}
