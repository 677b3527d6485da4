import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { contracts, type ContractName } from "../domain/contracts/index.js";
import { jsonSchemaFor } from "../domain/contracts/json-schema.js";

export const schemasDir = fileURLToPath(new URL("../../schemas/", import.meta.url));

export function renderSchema(name: ContractName): string {
  return `${JSON.stringify(jsonSchemaFor(name), null, 2)}\n`;
}

/** `npm run schemas`: regenerates schemas/*.json from the zod contracts. */
if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  mkdirSync(schemasDir, { recursive: true });
  for (const name of Object.keys(contracts) as ContractName[]) {
    writeFileSync(`${schemasDir}${name}.json`, renderSchema(name));
    console.log(`wrote schemas/${name}.json`);
  }
}
