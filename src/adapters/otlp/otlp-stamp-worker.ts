import { parentPort, workerData } from "node:worker_threads";
import { ReflectorError } from "../../domain/errors.js";
import type { OtlpEncoding } from "./otlp-decoder.js";
import { createOtlpTenantStamper } from "./otlp-tenant-stamp.js";

/** One OTLP/HTTP request to stamp, as the pool posts it. */
export interface StampJob {
  id: number;
  body: Uint8Array;
  encoding: OtlpEncoding;
  tenantId: string;
  maxRecordBytes: number;
  maxSpans: number;
}

/**
 * A worker thread of the OTLP/HTTP stamp pool (`otlp-stamp-pool.ts`): parses, validates and stamps
 * requests off the event loop that serves the processor and the API. Errors travel back as their
 * code and message; a ReflectorError's code survives the trip.
 */
const options = workerData as { tenantAttribute: string; projectAttribute: string };
const stamper = createOtlpTenantStamper(options);
const port = parentPort;
port?.on("message", (job: StampJob) => {
  try {
    const result = stamper.stamp(
      Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength),
      job.encoding,
      job.tenantId,
      job.maxRecordBytes,
      job.maxSpans,
    );
    port.postMessage({ id: job.id, result });
  } catch (err) {
    const code = err instanceof ReflectorError ? err.code : null;
    port.postMessage({
      id: job.id,
      error: { code, message: err instanceof Error ? err.message : String(err) },
    });
  }
});
