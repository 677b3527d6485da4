import { afterAll, describe, expect, it } from "vitest";
import { problemCatalogue } from "../../../src/http/problem-pages.js";
import { apiTestServer } from "../../support/api-server.js";

/** A problem's `type` leads somewhere: `/problems/{slug}` says what it means and what to do. */

const app = apiTestServer("pages-key-1:tenant-p:read", {}, { validateResponses: true });
afterAll(async () => {
  await app.close();
});

describe("problem type pages", () => {
  it("serve, without a key, a page for every type an answer can carry, with its title and status", async () => {
    const catalogue = problemCatalogue();
    expect(catalogue.length).toBeGreaterThanOrEqual(17);
    for (const kind of catalogue) {
      const res = await app.inject({ method: "GET", url: `/problems/${kind.slug}` });
      expect(res.statusCode, kind.slug).toBe(200);
      expect(res.headers["content-type"]).toMatch(/text\/html/);
      expect(res.body).toContain(kind.title);
      expect(res.body).toContain(`HTTP status ${String(kind.status)}`);
      expect(res.body).toContain("What to do");
    }
  });

  it("answer JSON to a client that asks for it", async () => {
    const res = await app.inject({
      method: "GET",
      url: "/problems/rate-limited",
      headers: { accept: "application/json" },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ type: string; status: number; todo: string }>();
    expect(body).toMatchObject({ type: "/problems/rate-limited", status: 429 });
    expect(body.todo).toMatch(/Retry-After/);
  });

  it("follow from a real error answer: its type dereferences to its page", async () => {
    const denied = await app.inject({ method: "GET", url: "/api/v1/reflections" });
    expect(denied.statusCode).toBe(401);
    const type = denied.json<{ type: string }>().type;
    const page = await app.inject({ method: "GET", url: type });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("No or unknown API key");
  });

  it("answer an unknown slug with a 404 problem", async () => {
    const res = await app.inject({ method: "GET", url: "/problems/no-such-thing" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ type: "/problems/not-found", status: 404 });
  });
});
