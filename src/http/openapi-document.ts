import { Registry } from "prom-client";
import { createApiKeyring } from "./api-keys.js";
import type { ApiRoutesDeps } from "./api-routes.js";
import { createHttpServer } from "./http-server.js";

/**
 * The OpenAPI document as the app serves it, from a server with every route registered and no
 * store behind it (nothing is called: the document comes from the routes' schemas alone). Written
 * to `docs/openapi.json` by `npm run openapi`; a test fails when the committed file differs.
 */

const unused = () => Promise.reject(new Error("the document's server serves no request"));

/** Every store method answers with a refusal: building the document calls none. */
const store = new Proxy({}, { get: () => unused }) as ApiRoutesDeps["stores"]["loops"] &
  ApiRoutesDeps["stores"]["lessons"] &
  ApiRoutesDeps["stores"]["feedback"];

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const app = createHttpServer({
    registry: new Registry(),
    isConsuming: () => false,
    isStopping: () => false,
    dependencies: [],
    api: {
      keys: createApiKeyring(new Map()),
      stores: { loops: store, lessons: store, feedback: store, lessonSplits: store as never },
      completeLoop: unused,
      commonIssues: unused,
      clock: { now: () => new Date(0) },
    },
  });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

/** The committed file's text: the document, two-space indented. */
export async function renderOpenApiDocument(): Promise<string> {
  return `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
}
