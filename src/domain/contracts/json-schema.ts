import { z } from "zod";
import { contracts, type ContractName } from "./index.js";

/**
 * JSON Schema (draft-07, which the schema registry client's validator speaks) generated from the
 * zod contract: the zod schema is the one source of truth.
 */
export function jsonSchemaFor(name: ContractName): Record<string, unknown> {
  const schema = z.toJSONSchema(contracts[name], { target: "draft-7", io: "input", unrepresentable: "any" });
  return { $id: `https://reflector.dev/schemas/${name}.json`, title: name, ...schema };
}
