import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/**
 * The body of an OTLP/HTTP error answer: a `google.rpc.Status`, encoded as the request was
 * (https://opentelemetry.io/docs/specs/otlp/#failures-1): protobuf for `application/x-protobuf`,
 * its proto3 JSON form (`{"code":3,"message":"…"}`) otherwise.
 */
export interface OtlpStatus {
  /** A `google.rpc.Code` value. */
  code: number;
  message: string;
}

/** `google.rpc.Code` values the OTLP route answers with. */
export const rpcCode = {
  invalidArgument: 3,
  notFound: 5,
  permissionDenied: 7,
  resourceExhausted: 8,
  internal: 13,
  unavailable: 14,
  unauthenticated: 16,
} as const;

/**
 * The `google.rpc.Code` for an HTTP status, as Google's HTTP mapping of the codes pairs them (400
 * invalid argument, 401 unauthenticated, 403 permission denied, 404 not found, 429 resource
 * exhausted, 503 unavailable, other 5xx internal). The statuses it does not list: 413 is
 * resource exhausted (gRPC's own answer to a message over its size limit), and any other 4xx
 * (415: a content type or encoding the route does not take) an invalid argument.
 */
export function rpcCodeOf(httpStatus: number): number {
  switch (httpStatus) {
    case 401:
      return rpcCode.unauthenticated;
    case 403:
      return rpcCode.permissionDenied;
    case 404:
      return rpcCode.notFound;
    case 413:
    case 429:
      return rpcCode.resourceExhausted;
    case 503:
      return rpcCode.unavailable;
    default:
      return httpStatus >= 500 ? rpcCode.internal : rpcCode.invalidArgument;
  }
}

/** `proto/`, at the package root in src/ and dist/ alike. */
const protoRoot = fileURLToPath(new URL("../../proto/", import.meta.url));
let statusType: protobuf.Type | null = null;

/** The `google.rpc.Status` message type, read once from proto/google/rpc/status.proto. */
function status(): protobuf.Type {
  if (statusType) return statusType;
  const root = new protobuf.Root();
  // The well-known types (google/protobuf/any.proto) come with protobufjs; the rest from proto/.
  root.resolvePath = (_origin, target) =>
    target.startsWith("google/protobuf/") ? target : protoRoot + target;
  root.loadSync("google/rpc/status.proto");
  statusType = root.lookupType("google.rpc.Status");
  return statusType;
}

/** A `google.rpc.Status` in protobuf's binary encoding. */
export function encodeStatus(value: OtlpStatus): Buffer {
  const type = status();
  return Buffer.from(type.encode(type.create({ code: value.code, message: value.message })).finish());
}

/** Reads a protobuf `google.rpc.Status` (for tests and clients of this route). */
export function decodeStatus(body: Uint8Array): OtlpStatus {
  const message = status().toObject(status().decode(body), { defaults: true }) as OtlpStatus;
  return { code: message.code, message: message.message };
}
