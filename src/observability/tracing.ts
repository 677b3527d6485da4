import { context, propagation, trace, type Tracer } from "@opentelemetry/api";
import type { Sampler, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "../config/config.js";
import type { Logger } from "./logger.js";
import { within } from "../domain/within.js";

/** The instrumentation scope of Reflector's own spans. */
export const tracerName = "reflector";

export interface Tracing {
  /** False when no endpoint is set: no SDK, no context manager, no hooks; nothing was started. */
  readonly enabled: boolean;
  /** The tracer of Reflector's spans (the API's no-op tracer when tracing is off). */
  readonly tracer: Tracer;
  /**
   * Exports the spans still buffered, within `deadlineMs`, and stops the SDK. False when the
   * export did not finish in time: its retries (a collector that is down) may still hold the
   * event loop, and the caller should not wait for them.
   */
  shutdown(deadlineMs: number): Promise<boolean>;
}

/** Tracing off: the API's tracer with no SDK behind it, so every span is a non-recording no-op. */
function off(): Tracing {
  return { enabled: false, tracer: trace.getTracer(tracerName), shutdown: () => Promise.resolve(true) };
}

/**
 * Hooks the libraries whose calls become spans (pg, ioredis, and undici — Node's fetch, which the
 * OpenAI SDK uses). Must run before those libraries are imported, so the entry point calls it
 * before it loads the rest of the program; with tracing off it does nothing.
 *
 * ioredis is reached through an ES `import`, which only a module loader hook sees; pg and undici
 * are patched through `require` and diagnostics channels. The hook wraps only the modules named here.
 * kafkajs is deliberately not instrumented: @opentelemetry/instrumentation-kafkajs would make the
 * transactional producer's send (one transaction for many events) a trace of its own and write
 * that trace's context into the outputs' `traceparent`, cutting them off from their event's trace.
 */
export async function instrumentLibraries(config: TracingConfig | null): Promise<boolean> {
  if (!config?.enabled) return false;
  // The in-thread loader hook (module.registerHooks); a Node.js too old for it still traces pg and
  // fetch, only not ioredis.
  const hooks = await import("import-in-the-middle/register-hooks.mjs");
  if (hooks.supportsSyncHooks()) hooks.register({ include: ["ioredis", "pg"] });
  const [{ registerInstrumentations }, { PgInstrumentation }, { IORedisInstrumentation }, undici] =
    await Promise.all([
      import("@opentelemetry/instrumentation"),
      import("@opentelemetry/instrumentation-pg"),
      import("@opentelemetry/instrumentation-ioredis"),
      import("@opentelemetry/instrumentation-undici"),
    ]);
  registerInstrumentations({
    instrumentations: [
      // Only calls made for an event (under its spans): not health probes, lag polls or start-up.
      // Statements are recorded without their parameters (the default), so no trace text leaks.
      new PgInstrumentation({ requireParentSpan: true }),
      // The default serializer keeps keys and replaces values with "[n other arguments]".
      new IORedisInstrumentation({ requireParentSpan: true }),
      new undici.UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
  return true;
}

export interface TracingOptions {
  /** Replaces the OTLP exporter (tests). */
  exporter?: SpanExporter;
  /** Replaces the batching processor around the exporter (tests). */
  spanProcessor?: SpanProcessor;
}

/**
 * Starts the OpenTelemetry SDK when an OTLP endpoint is configured: a tracer provider with the
 * configured sampler and resource, batching to the OTLP/HTTP exporter, the AsyncLocalStorage
 * context manager and the W3C trace-context propagator, all registered as the API's globals.
 * With no endpoint it starts nothing (the SDK's modules are not even loaded): the tracer is the
 * API's no-op one.
 */
export async function startTracing(
  config: TracingConfig,
  logger: Logger,
  options: TracingOptions = {},
): Promise<Tracing> {
  if (!config.enabled || config.url === null) return off();
  const [sdk, { AsyncLocalStorageContextManager }, core, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
    import("@opentelemetry/resources"),
  ]);
  const exporter = options.exporter ?? (await otlpExporter(config, config.url));
  const processor = options.spanProcessor ?? new sdk.BatchSpanProcessor(exporter);
  const ratio = () => new sdk.TraceIdRatioBasedSampler(config.samplerRatio);
  const samplers: Record<TracingConfig["sampler"], () => Sampler> = {
    always_on: () => new sdk.AlwaysOnSampler(),
    always_off: () => new sdk.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: () => new sdk.ParentBasedSampler({ root: ratio() }),
  };
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, "service.name": config.serviceName }),
    sampler: samplers[config.sampler](),
    spanProcessors: [processor],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
    }),
  );
  trace.setGlobalTracerProvider(provider);
  logger.info(
    { url: config.url, protocol: config.protocol, sampler: config.sampler, serviceName: config.serviceName },
    "tracing on: exporting spans over OTLP",
  );
  let stopped = false;
  return {
    enabled: true,
    tracer: trace.getTracer(tracerName),
    async shutdown(deadlineMs) {
      if (stopped) return true;
      stopped = true;
      try {
        const result = await within(
          provider.shutdown().then(() => "done" as const),
          deadlineMs,
          "late" as const,
        );
        if (result === "done") return true;
        logger.warn({ deadlineMs }, "spans not all exported before the deadline");
        return false;
      } catch (err) {
        logger.warn({ err }, "tracing shutdown failed");
        return false;
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}

async function otlpExporter(config: TracingConfig, url: string): Promise<SpanExporter> {
  const settings = { url, headers: { ...config.headers }, timeoutMillis: config.timeoutMs };
  if (config.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter(settings);
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter(settings);
}
