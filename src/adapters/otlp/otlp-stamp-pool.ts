import { Worker } from "node:worker_threads";
import { ReflectorError, type ErrorCode } from "../../domain/errors.js";
import type { OtlpEncoding } from "./otlp-decoder.js";
import type { StampedRequest } from "./otlp-tenant-stamp.js";
import type { StampJob } from "./otlp-stamp-worker.js";

export interface OtlpStampPool {
  /** What `OtlpTenantStamper.stamp` answers, computed on a worker thread. */
  stamp(
    body: Buffer,
    encoding: OtlpEncoding,
    tenantId: string,
    maxRecordBytes: number,
    maxSpans: number,
  ): Promise<StampedRequest>;
  close(): Promise<void>;
}

interface Pending {
  resolve: (result: StampedRequest) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * Worker threads that parse and stamp OTLP/HTTP requests (`OTLP_HTTP_WORKERS`), so that a large
 * request costs the event loop that serves the processor and the API only a copy of its bytes: the
 * parse, the validation and the re-encoding run beside it. Each request goes to the worker with the
 * fewest in hand. A worker that dies fails its requests (the exporter retries) and is replaced.
 *
 * Compiled, the worker is `otlp-stamp-worker.js` next to this file; from the TypeScript sources
 * (tests, `tsx`) it is the `.ts` file, loaded through tsx.
 */
export function createOtlpStampPool(options: {
  size: number;
  tenantAttribute: string;
  projectAttribute: string;
}): OtlpStampPool {
  const fromSource = import.meta.url.endsWith(".ts");
  const script = new URL(fromSource ? "./otlp-stamp-worker.ts" : "./otlp-stamp-worker.js", import.meta.url);
  const workerData = { tenantAttribute: options.tenantAttribute, projectAttribute: options.projectAttribute };
  let nextId = 0;
  let closed = false;

  function spawn(): Slot {
    const worker = new Worker(script, {
      workerData,
      ...(fromSource ? { execArgv: ["--import", "tsx"] } : {}),
    });
    const slot: Slot = { worker, pending: new Map() };
    worker.unref();
    worker.on(
      "message",
      (message: {
        id: number;
        result?: StampedRequest;
        error?: { code: string | null; message: string };
      }) => {
        const waiting = slot.pending.get(message.id);
        if (!waiting) return;
        slot.pending.delete(message.id);
        if (message.error) {
          const { code, message: text } = message.error;
          waiting.reject(code ? new ReflectorError(code as ErrorCode, text) : new Error(text));
          return;
        }
        const result = message.result;
        if (!result) {
          waiting.reject(new Error("an OTLP stamp worker answered nothing"));
          return;
        }
        waiting.resolve(
          result.ok
            ? {
                ...result,
                values: result.values.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
              }
            : result,
        );
      },
    );
    const fail = (err: Error) => {
      for (const waiting of slot.pending.values()) waiting.reject(err);
      slot.pending.clear();
      const at = slots.indexOf(slot);
      if (!closed && at >= 0) slots[at] = spawn();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => {
      if (!closed) fail(new Error(`an OTLP stamp worker exited (${String(code)})`));
    });
    return slot;
  }

  const slots: Slot[] = Array.from({ length: Math.max(1, options.size) }, spawn);

  return {
    stamp(body, encoding, tenantId, maxRecordBytes, maxSpans) {
      if (closed) return Promise.reject(new Error("the OTLP stamp pool is closed"));
      const slot = slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const id = (nextId += 1);
      const job: StampJob = { id, body, encoding, tenantId, maxRecordBytes, maxSpans };
      return new Promise<StampedRequest>((resolve, reject) => {
        slot.pending.set(id, { resolve, reject });
        slot.worker.postMessage(job);
      });
    },
    async close() {
      closed = true;
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}
