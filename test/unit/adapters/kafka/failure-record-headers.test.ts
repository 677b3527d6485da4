import { readFileSync } from "node:fs";
import type { KafkaMessage, Message } from "kafkajs";
import { describe, expect, it } from "vitest";
import {
  deadLetterMessage,
  failureRecordHeaders,
  retryMessage,
} from "../../../../src/adapters/kafka/failure-records.js";
import { errorCodes } from "../../../../src/domain/errors.js";

const read = (path: string) => readFileSync(new URL(`../../../../${path}`, import.meta.url), "utf8");

/** The rows of docs/error-codes.md's header table: `| \`reflector.x\` | … |`. */
function documentedHeaders(): string[] {
  const doc = read("docs/error-codes.md");
  return [...doc.matchAll(/^\|\s*`(reflector\.[a-z.-]+)`\s*\|/gm)].map((m) => m[1] ?? "");
}

// The files that write dead letters, retry records and replayed records.
const writers = [
  "src/adapters/kafka/failure-records.ts",
  "src/adapters/kafka/bridge-publisher.ts",
  "src/adapters/kafka/admin/dlq-replay.ts",
];

describe("the headers of dead letters and retry records, as docs/error-codes.md lists them", () => {
  it("the doc's header table is the code's list, in order", () => {
    expect(documentedHeaders()).toEqual([...failureRecordHeaders]);
  });

  it("every reflector.* header the writers name is in the list, and each in the list is written", () => {
    const named = new Set(
      writers.flatMap((f) => [...read(f).matchAll(/"(reflector\.[a-z.-]+)"/g)].map((m) => m[1])),
    );
    for (const name of named) expect(failureRecordHeaders).toContain(name);
    for (const name of failureRecordHeaders) expect(named).toContain(name);
  });

  it("a dead letter and a retry record carry only listed headers, and their code's value is documented", () => {
    const source = {
      topic: "agent.task.completed.retry",
      partition: 0,
      message: {
        key: Buffer.from("k"),
        value: Buffer.from("{}"),
        headers: { "reflector.original.topic": "in", traceparent: "00-abc-01" },
        offset: "7",
        timestamp: "0",
        attributes: 0,
      } as KafkaMessage,
    };
    const fits = () => true;
    for (const code of Object.keys(errorCodes) as (keyof typeof errorCodes)[]) {
      const context = { groupId: "g", code, reason: "r", now: new Date(0), retryTopic: source.topic };
      const records: Message[] = [deadLetterMessage(source, context, fits)];
      const retry = retryMessage(source, context, 1, fits);
      if (retry) records.push(retry);
      for (const record of records) {
        const reflectorHeaders = Object.keys(record.headers ?? {}).filter((h) => h.startsWith("reflector."));
        for (const name of reflectorHeaders) expect(failureRecordHeaders).toContain(name);
        expect(record.headers?.["reflector.error.code"]).toBe(code);
      }
    }
    const tooLarge = deadLetterMessage(
      source,
      { groupId: "g", code: "OUTPUT_TOO_LARGE", reason: "r", now: new Date(0) },
      (m) => m.value === null,
    );
    expect(Object.keys(tooLarge.headers ?? {})).toContain("reflector.value.omitted");
  });
});
