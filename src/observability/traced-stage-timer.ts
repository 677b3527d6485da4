import { SpanStatusCode, type Attributes, type Tracer } from "@opentelemetry/api";
import type { StageAttributes, StageTimer } from "../pipeline/stage-timer.js";

/** Span names are `reflector.<stage>`; the attributes under `reflector.` are documented in docs/operations.md. */
export const stageSpanName = (stage: string): string => `reflector.${stage}`;

/** Stage attributes as span attributes: unset and null values are left out. */
export function spanAttributes(attributes: StageAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (!attributes) return out;
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) out[name] = value;
  }
  return out;
}

/**
 * Stages that are timed but get no span of their own: each is one Redis or Postgres read, which
 * the pg and ioredis instrumentations already show as a span (under the event's span), and they
 * run several times per event, so a span of theirs would double the count and add nothing.
 */
export const unspannedStages: ReadonlySet<string> = new Set(["index", "store-read"]);

/**
 * The stage timer with a span around every stage (but `unspannedStages`): the same wrapper times the stage (histogram)
 * and traces it, so stages stay free of both. The span is the active one while the stage runs,
 * so what the stage calls (Postgres, Redis, the LLM's HTTP request) nests under it. Built only
 * when tracing is on: with tracing off the plain timer is used and nothing here runs.
 */
export function withSpans(timer: StageTimer, tracer: Tracer): StageTimer {
  return {
    time(stage, work, describe) {
      if (unspannedStages.has(stage)) return timer.time(stage, work);
      return tracer.startActiveSpan(
        stageSpanName(stage),
        { attributes: spanAttributes(describe?.attributes) },
        async (span) => {
          try {
            const result = await timer.time(stage, work);
            if (describe?.outcome) span.setAttributes(spanAttributes(describe.outcome(result)));
            return result;
          } catch (err) {
            span.recordException(err instanceof Error ? err : String(err));
            span.setStatus({ code: SpanStatusCode.ERROR, message: errorText(err) });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
  };
}

/** An error's name and message, cut short: a span's status is for finding it, not reading it. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
