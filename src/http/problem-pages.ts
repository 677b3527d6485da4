import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { problemTypeBase, problemTypes } from "./problem-details.js";

/**
 * What a problem's `type` points at: `/problems/{slug}` answers a short page (HTML, or JSON for a
 * client that asks for it) saying what the problem means and what a client should do about it, so
 * that the URI in every error answer leads somewhere (RFC 9457 §3.1.1). No key is needed: a client
 * that got a 401 must be able to read why.
 */

/** What each problem means, and what the caller should do, by the slug in its `type`. */
const guidance: Readonly<Record<string, { means: string; todo: string }>> = {
  validation: {
    means: "The body, the path or the query does not match the operation's schema.",
    todo: "Read `issues`: each names the field and what was wrong. Fix the request; sending it again unchanged gets the same answer.",
  },
  unauthorized: {
    means: "The request carries no `Authorization: Bearer` key, or one this deployment does not know.",
    todo: "Send a key the operators issued. Many unknown keys from one address are throttled (429).",
  },
  forbidden: {
    means:
      "The key is known, but its roles do not allow this operation (for example a `read` key asking to vote).",
    todo: "Use a key with the role the operation names in the API reference, or ask the operators for one.",
  },
  "not-found": {
    means:
      "No such route, or no such record for the key's tenant (another tenant's records are never found).",
    todo: "Check the path and the id; do not retry.",
  },
  "method-not-allowed": {
    means: "The route exists, but not with this HTTP method.",
    todo: "Use the method the API reference gives for the route.",
  },
  "not-acceptable": {
    means: "The `Accept` header asks for a media type the route cannot answer.",
    todo: "Accept `application/json` (or what the route documents).",
  },
  "request-timeout": {
    means: "The request's body did not arrive in time.",
    todo: "Retry; if it keeps happening, the network between you and the API is slow or the body is large.",
  },
  conflict: {
    means: "The request contradicts what is stored (for example a split of a lesson that changed meanwhile).",
    todo: "Read the record again and decide on what it holds now.",
  },
  "payload-too-large": {
    means: "The body is over the route's size limit.",
    todo: "Send less at once (for OTLP, fewer spans a request); the limit is in the configuration reference.",
  },
  "uri-too-long": {
    means: "The request's URI is over the server's limit.",
    todo: "Move long values into the body, or shorten the query.",
  },
  "unsupported-media-type": {
    means: "The body's `Content-Type` is not one the route accepts.",
    todo: "Send `application/json` (or, for OTLP/HTTP, `application/x-protobuf`).",
  },
  "rate-limited": {
    means: "The key, the tenant or the address is over one of its limits a minute.",
    todo: "Wait for the seconds in `Retry-After`, then retry. The clients do this for you.",
  },
  internal: {
    means: "Reflector failed to answer; the failure is logged with the request's id.",
    todo: "Retry later; if it persists, give the operators the time and `instance` of the answer.",
  },
  "bad-gateway": {
    means: "A service Reflector called answered with an error.",
    todo: "Retry later.",
  },
  unavailable: {
    means:
      "A dependency (Kafka, Postgres, Redis or the model endpoint) cannot be reached, or Reflector is stopping.",
    todo: "Retry after `Retry-After` when given, or later; the readiness check at `/readyz` says which dependency.",
  },
  "deadline-exceeded": {
    means: "The answer was not ready within the route's deadline.",
    todo: "Retry; for `POST /api/v1/reflect` a 202 names where to read the outcome instead.",
  },
  "response-contract": {
    means:
      "Reflector's answer did not match its own documented schema, so it was not sent (the response check is on).",
    todo: "Report it to the operators with the time and `instance`: it is a defect of the server, not of the request.",
  },
};

/** Every problem type an answer can carry: slug, status and title. */
export function problemCatalogue(): { slug: string; status: number; title: string }[] {
  const byStatus = Object.entries(problemTypes).map(([status, kind]) => ({
    slug: kind.slug,
    status: Number(status),
    title: kind.title,
  }));
  return [
    ...byStatus,
    { slug: "response-contract", status: 500, title: "The answer does not match its documented schema" },
  ];
}

function escape(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const code = (text: string) => escape(text).replace(/`([^`]+)`/g, "<code>$1</code>");

function page(kind: { slug: string; status: number; title: string }, help: { means: string; todo: string }) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(kind.title)}</title></head>
<body>
<h1>${escape(kind.title)}</h1>
<p>Problem type <code>${problemTypeBase}${kind.slug}</code>, answered with HTTP status ${String(kind.status)}.</p>
<h2>What it means</h2><p>${code(help.means)}</p>
<h2>What to do</h2><p>${code(help.todo)}</p>
<p>Every problem answer also carries <code>detail</code> (what happened to this request) and <code>instance</code> (its path). The <a href="/docs">API reference</a> lists each operation's answers.</p>
</body></html>
`;
}

const pageAnswer = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  means: z.string(),
  todo: z.string(),
});

/** `GET /problems/{slug}`: the page a problem's `type` names; an unknown slug is a 404 problem. */
export function registerProblemPages(app: FastifyInstance): void {
  const catalogue = new Map(problemCatalogue().map((kind) => [kind.slug, kind]));
  app.get(
    `${problemTypeBase}:slug`,
    {
      schema: {
        summary: "What a problem type means and what to do about it (the page its `type` names)",
        operationId: "getProblemType",
        tags: ["operations"],
        params: z.object({ slug: z.string().max(64) }),
        response: {
          200: z.union([z.string().describe("an HTML page"), pageAnswer]),
          404: z.looseObject({ type: z.string(), status: z.number() }).describe("no such problem type"),
        },
      },
    },
    async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const kind = catalogue.get(slug);
      const help = guidance[slug];
      if (!kind || !help)
        return reply.code(404).send({ error: "not_found", message: `no problem type "${slug}"` });
      const accept = request.headers.accept ?? "";
      if (/json/i.test(accept) && !/html/i.test(accept))
        return { type: `${problemTypeBase}${slug}`, title: kind.title, status: kind.status, ...help };
      return reply.header("content-type", "text/html; charset=utf-8").send(page(kind, help));
    },
  );
}
