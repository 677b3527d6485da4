import { problemOf } from "../../src/http/problem-details.js";

/**
 * The problem-details answer (RFC 9457) the API gives for an error body of before: the same
 * `error` and `message` (and any other keys), with `type`, `title`, `status`, `detail` and
 * `instance` (the request's path).
 */
export function problem(
  status: number,
  path: string,
  body: Record<string, unknown>,
): Record<string, unknown> {
  return problemOf(status, body, path);
}
