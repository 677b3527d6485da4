import { describe, expect, it } from "vitest";
import { classify, transportFailure } from "../../../../src/adapters/kafka/transport-errors.js";
import { ReflectorError } from "../../../../src/domain/errors.js";

const errno = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:9092`), { code });

describe("the Kafka adapter's edge for failures no adapter named", () => {
  it.each(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"])(
    "a socket error (%s) is a TRANSPORT outage, its cause kept",
    (code) => {
      const err = errno(code);
      const named = transportFailure(err);
      expect(named).toBeInstanceOf(ReflectorError);
      expect(named).toMatchObject({ code: "TRANSPORT", cause: err });
      expect(classify(err)).toEqual({ action: "retry", code: "TRANSPORT", kind: "outage" });
    },
  );

  it("an error kafkajs marks retriable, or one about a connection, is an outage too", () => {
    const leader = Object.assign(new Error("There is no leader for this topic-partition"), {
      retriable: true,
    });
    expect(classify(leader)).toMatchObject({ code: "TRANSPORT", kind: "outage" });
    expect(classify(new Error("Connection error: read ECONNRESET"))).toMatchObject({ code: "TRANSPORT" });
  });

  it("leaves named failures, bugs and thrown non-errors as they are", () => {
    const named = new ReflectorError("SCHEMA_INVALID", "bad");
    expect(transportFailure(named)).toBe(named);
    const bug = new TypeError("cannot read properties of undefined");
    expect(transportFailure(bug)).toBe(bug);
    expect(transportFailure("a string")).toBe("a string");
    expect(classify(bug)).toEqual({ action: "crash", code: "INTERNAL", kind: "fatal" });
    expect(classify(Object.assign(new Error("not retriable"), { retriable: false }))).toMatchObject({
      code: "INTERNAL",
    });
    expect(classify(named)).toEqual({ action: "dead-letter", code: "SCHEMA_INVALID", kind: "rejected" });
  });
});
