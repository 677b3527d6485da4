import type { IHeaders } from "kafkajs";
import type { OutboundMessage } from "../../pipeline/ports.js";

/** CloudEvents 1.0 Kafka binary mode: attributes as `ce_` headers, the data as the value. */
export function cloudEventHeaders(
  message: OutboundMessage,
  source: string,
  contentType: string,
  inbound: IHeaders | undefined,
): IHeaders {
  const headers: IHeaders = {
    ce_specversion: "1.0",
    ce_id: message.id,
    ce_source: source,
    ce_type: message.type,
    ce_time: message.time,
    ce_subject: message.subject,
    "content-type": contentType,
  };
  // W3C trace context flows from the agent's event to everything derived from it.
  for (const name of ["traceparent", "tracestate"]) {
    const value = inbound?.[name];
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

export function headerString(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}
