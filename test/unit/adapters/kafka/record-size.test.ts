import { describe, expect, it } from "vitest";
import type { Message } from "kafkajs";
import {
  fitsAlone,
  recordBytes,
  splitBySize,
  type SizeLimits,
} from "../../../../src/adapters/kafka/record-size.js";

const kb = (n: number): Message => ({ key: "k", value: Buffer.alloc(n * 1024, 120), headers: { h: "v" } });
const limits = (topicKb: Record<string, number>, requestKb = 1024): SizeLimits => ({
  topicBytes: (topic) => (topicKb[topic] ?? 1024) * 1024,
  requestBytes: requestKb * 1024,
});

describe("record sizes", () => {
  it("bounds a record by its key, value and headers", () => {
    const m = kb(10);
    expect(recordBytes(m)).toBeGreaterThan(10 * 1024 + 1 + 1 + 1);
    expect(recordBytes(m)).toBeLessThan(10 * 1024 + 100);
  });

  it("says whether one record fits its topic and the request", () => {
    expect(fitsAlone(kb(100), "small", limits({ small: 128 }))).toBe(true);
    expect(fitsAlone(kb(128), "small", limits({ small: 128 }))).toBe(false);
    expect(fitsAlone(kb(600), "big", limits({ big: 4096 }, 512))).toBe(false);
  });

  it("splits a transaction so no topic's share of a send exceeds its limit, keeping order", () => {
    const messages = Array.from({ length: 10 }, (_, i) => ({ ...kb(300), key: String(i) }));
    const sends = splitBySize([{ topic: "dlq", messages }], limits({ dlq: 1024 }, 10 * 1024));
    expect(sends.length).toBe(4); // 3 records of ~300 KiB per 1 MiB send
    for (const send of sends) {
      const bytes = send.flatMap((t) => t.messages).reduce((n, m) => n + recordBytes(m), 0);
      expect(bytes).toBeLessThanOrEqual(1024 * 1024);
    }
    expect(sends.flatMap((s) => s.flatMap((t) => t.messages.map((m) => m.key)))).toEqual(
      messages.map((m) => m.key),
    );
  });

  it("also keeps each send under the request limit across topics", () => {
    const sends = splitBySize(
      [
        { topic: "a", messages: [kb(400), kb(400)] },
        { topic: "b", messages: [kb(400), kb(400)] },
      ],
      limits({ a: 4096, b: 4096 }, 1024),
    );
    expect(sends.length).toBe(2);
    expect(sends.map((s) => s.map((t) => `${t.topic}:${String(t.messages.length)}`))).toEqual([
      ["a:2"],
      ["b:2"],
    ]);
  });

  it("refuses a record that cannot fit at all (callers replace those first)", () => {
    expect(() => splitBySize([{ topic: "t", messages: [kb(2048)] }], limits({ t: 1024 }))).toThrow(
      /does not fit t/,
    );
  });
});
