import { Registry } from "prom-client";
import { createApiKeyring, parseApiKeys } from "../../src/http/api-keys.js";
import type { ApiRoutesDeps } from "../../src/http/api-routes.js";
import { createHttpServer, type HttpServerDeps } from "../../src/http/http-server.js";

/** Every store at once, for routes a test does not reach: any method it calls rejects. */
export type AnyApiStore = ApiRoutesDeps["stores"]["loops"] &
  ApiRoutesDeps["stores"]["lessons"] &
  ApiRoutesDeps["stores"]["feedback"];

export const unusedStore = new Proxy(
  {},
  { get: () => () => Promise.reject(new Error("not used")) },
) as AnyApiStore;

/**
 * The HTTP server with the API, as the unit tests of routes build it: `keys` in API_KEYS' form,
 * every store unused, no loops to complete, no common issues, the wall clock; `api` replaces any
 * of these, `server` any of the server's own options.
 */
export function apiTestServer(
  keys: string,
  api: Partial<ApiRoutesDeps> = {},
  server: Partial<Omit<HttpServerDeps, "api">> = {},
) {
  return createHttpServer({
    registry: new Registry(),
    isConsuming: () => true,
    isStopping: () => false,
    dependencies: [],
    ...server,
    api: {
      keys: createApiKeyring(parseApiKeys(keys)),
      stores: { loops: unusedStore, lessons: unusedStore, feedback: unusedStore },
      completeLoop: () => Promise.reject(new Error("not used")),
      commonIssues: () => Promise.resolve([]),
      clock: { now: () => new Date() },
      ...api,
    },
  });
}
