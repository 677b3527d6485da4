/**
 * The API reference page: the OpenAPI document rendered as one self-contained HTML page (no
 * script, no stylesheet or font from elsewhere), so it works offline and behind any proxy.
 */

type Json = Record<string, unknown>;

const methods = ["get", "put", "post", "delete", "patch"] as const;

const textOf = (value: unknown): string =>
  typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);

function escape(text: unknown): string {
  return textOf(text)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** The little markdown the descriptions use: `code` and **bold**, paragraphs on blank lines. */
function inline(text: unknown): string {
  return escape(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
}

function paragraphs(text: unknown): string {
  return textOf(text)
    .split(/\n\s*\n/)
    .filter((p) => p.trim() !== "")
    .map((p) => `<p>${inline(p)}</p>`)
    .join("\n");
}

function schemaBlock(schema: unknown): string {
  if (schema === undefined) return "";
  return `<details><summary>schema</summary><pre>${escape(JSON.stringify(schema, null, 2))}</pre></details>`;
}

function parametersOf(operation: Json): string {
  const parameters = (operation.parameters as Json[] | undefined) ?? [];
  if (parameters.length === 0) return "";
  const rows = parameters
    .map((p) => {
      const deprecated = p.deprecated === true || (p.schema as Json | undefined)?.deprecated === true;
      return `<tr><td><code>${escape(p.name)}</code>${deprecated ? " <em>deprecated</em>" : ""}</td><td>${escape(p.in)}</td><td>${p.required === true ? "yes" : ""}</td><td>${inline(p.description ?? (p.schema as Json | undefined)?.description ?? "")}</td></tr>`;
    })
    .join("\n");
  return `<table><tr><th>parameter</th><th>in</th><th>required</th><th></th></tr>\n${rows}</table>`;
}

function firstContent(holder: unknown): { type: string; schema: unknown } | null {
  const content = (holder as Json | undefined)?.content as Record<string, Json> | undefined;
  const [type, media] = Object.entries(content ?? {})[0] ?? [];
  return type ? { type, schema: media?.schema } : null;
}

function operationHtml(method: string, path: string, operation: Json): string {
  const id = escape(operation.operationId ?? `${method}-${path}`);
  const body = firstContent(operation.requestBody);
  const responses = Object.entries((operation.responses as Record<string, Json> | undefined) ?? {})
    .map(([status, response]) => {
      const content = firstContent(response);
      return `<li><strong>${escape(status)}</strong> ${inline(response.description ?? "")}${content ? ` <code>${escape(content.type)}</code>` : ""}${schemaBlock(content?.schema)}</li>`;
    })
    .join("\n");
  return `<section class="op" id="${id}">
<h3><span class="m">${method.toUpperCase()}</span> <code>${escape(path)}</code> <small>${id}</small></h3>
${paragraphs(operation.summary)}${paragraphs(operation.description)}
${parametersOf(operation)}
${body ? `<p>Body: <code>${escape(body.type)}</code></p>${schemaBlock(body.schema)}` : ""}
<ul>${responses}</ul>
</section>`;
}

export function renderApiReference(
  document: Json,
  deprecations: { sunset: string; items: readonly string[] },
): string {
  const info = (document.info as Json | undefined) ?? {};
  const paths = (document.paths as Record<string, Json> | undefined) ?? {};
  const tags = ((document.tags as Json[] | undefined) ?? []).map((t) => String(t.name));
  const byTag = new Map<string, string[]>(tags.map((t) => [t, []]));
  for (const [path, item] of Object.entries(paths)) {
    for (const method of methods) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const tag = (operation.tags as string[] | undefined)?.[0] ?? "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)?.push(operationHtml(method, path, operation));
    }
  }
  const sections = [...byTag]
    .filter(([, ops]) => ops.length > 0)
    .map(([tag, ops]) => `<h2 id="tag-${escape(tag)}">${escape(tag)}</h2>\n${ops.join("\n")}`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font-family:ui-monospace,monospace;font-size:90%}pre{background:#f5f5f5;padding:.5rem;overflow:auto}
.op{border-top:1px solid #ddd;padding:.5rem 0}.m{background:#333;color:#fff;padding:0 .4rem;border-radius:3px}
small{color:#777}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
</style></head><body>
<h1>${escape(info.title)} <small>${escape(info.version)}</small></h1>
${paragraphs(info.description)}
<p>The OpenAPI document: <a href="/docs/openapi.json">/docs/openapi.json</a>.</p>
<section id="deprecations"><h2>Deprecations</h2>
<p>Accepted until ${escape(deprecations.sunset)}, answered with <code>Deprecation: true</code>, a <code>Sunset</code> date and a <code>Link: &lt;/docs#deprecations&gt;; rel="deprecation"</code>:</p>
<ul>${deprecations.items.map((item) => `<li>${inline(item)}</li>`).join("\n")}</ul></section>
${sections}
</body></html>
`;
}
