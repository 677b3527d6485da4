import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderOpenApiDocument } from "../http/openapi-document.js";

export const openApiPath = fileURLToPath(new URL("../../docs/openapi.json", import.meta.url));

/** `npm run openapi`: regenerates docs/openapi.json from the routes' schemas. */
if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  writeFileSync(openApiPath, await renderOpenApiDocument());
  console.log("wrote docs/openapi.json");
}
