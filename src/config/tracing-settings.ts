import { z } from "zod";
import { boolFlag, presentOnly } from "./env-parsing.js";

// ---------------------------------------------------------------------------------------------
// OpenTelemetry tracing: the standard OTEL_* variables (docs/operations.md#tracing). Kept in one
// block because the entry point parses it alone, before the rest of the program is loaded: the
// libraries it traces must be hooked before they are imported.
// ---------------------------------------------------------------------------------------------

const otlpUrl = z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional();

const otlpProtocol = z.enum(["http/protobuf", "http/json"], {
  error: "http/protobuf or http/json (gRPC is not supported: use the collector's HTTP port, 4318)",
});

/** `key=value,key=value` with percent-encoded values (the OTLP headers and resource attributes format). */
const keyValueList = z.string().transform((value, ctx) => {
  const out: Record<string, string> = {};
  for (const part of value.split(",")) {
    if (part.trim() === "") continue;
    const at = part.indexOf("=");
    const key = at > 0 ? part.slice(0, at).trim() : "";
    if (!key) {
      ctx.addIssue({ code: "custom", message: "each entry must be key=value" });
      return z.NEVER;
    }
    try {
      out[key] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      ctx.addIssue({ code: "custom", message: `the value of ${key} is not valid percent-encoding` });
      return z.NEVER;
    }
  }
  return out;
});

export const TracingEnvSchema = z.object({
  /** Base URL of an OTLP/HTTP receiver; spans go to `<endpoint>/v1/traces`. Unset = no tracing. */
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
  /** The full URL for spans, overriding OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.default("http/protobuf"),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList.optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList.optional(),
  OTEL_EXPORTER_OTLP_TIMEOUT: z.coerce.number().int().min(1).max(600_000).default(10_000),
  OTEL_SERVICE_NAME: z.string().min(1).default("reflector"),
  OTEL_RESOURCE_ATTRIBUTES: keyValueList.optional(),
  OTEL_TRACES_SAMPLER: z
    .enum([
      "always_on",
      "always_off",
      "traceidratio",
      "parentbased_always_on",
      "parentbased_always_off",
      "parentbased_traceidratio",
    ])
    .default("parentbased_always_on"),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  OTEL_SDK_DISABLED: boolFlag.default(false),
});

export interface TracingConfig {
  /** An endpoint is set and the SDK is not disabled. */
  enabled: boolean;
  /** Where spans are sent (OTLP/HTTP); null when tracing is off. */
  url: string | null;
  protocol: z.infer<typeof otlpProtocol>;
  /** Sent with every export (an API key, say): never logged. */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  serviceName: string;
  resourceAttributes: Readonly<Record<string, string>>;
  sampler: z.infer<typeof TracingEnvSchema.shape.OTEL_TRACES_SAMPLER>;
  /** The ratio of the `traceidratio` samplers (default 1). */
  samplerRatio: number;
}

export function tracingConfigOf(e: z.infer<typeof TracingEnvSchema>): TracingConfig {
  let base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  while (base?.endsWith("/")) base = base.slice(0, -1);
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base}/v1/traces` : null);
  return {
    enabled: url !== null && !e.OTEL_SDK_DISABLED,
    url: e.OTEL_SDK_DISABLED ? null : url,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: { ...e.OTEL_EXPORTER_OTLP_HEADERS, ...e.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    timeoutMs: e.OTEL_EXPORTER_OTLP_TIMEOUT,
    serviceName: e.OTEL_SERVICE_NAME,
    resourceAttributes: e.OTEL_RESOURCE_ATTRIBUTES ?? {},
    sampler: e.OTEL_TRACES_SAMPLER,
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
  };
}

/**
 * The tracing settings alone, for the entry point (before the program's modules load). Invalid
 * values mean "no tracing" here: `loadConfig` lists them with every other problem and stops.
 */
export function loadTracingConfig(env: Record<string, string | undefined>): TracingConfig | null {
  const parsed = TracingEnvSchema.safeParse(presentOnly(env));
  return parsed.success ? tracingConfigOf(parsed.data) : null;
}
