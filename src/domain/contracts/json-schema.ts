import { z } from "zod";
import { contracts, type ContractName } from "./index.js";
import { unpublishedFields } from "./loop-decision.js";

/**
 * JSON Schema (draft-07, which the schema registry client's validator speaks) generated from the
 * zod contract: the zod schema is the one source of truth.
 */
export function jsonSchemaFor(name: ContractName): Record<string, unknown> {
  const schema = z.toJSONSchema(contracts[name], { target: "draft-7", io: "input", unrepresentable: "any" });
  // Fields the published schema leaves out (loop-decision.ts says why): it stays as registered.
  const hidden = unpublishedFields[name] ?? [];
  if (schema.properties && hidden.length > 0)
    schema.properties = Object.fromEntries(
      Object.entries(schema.properties).filter(([field]) => !hidden.includes(field)),
    );
  return { $id: `https://reflector.dev/schemas/${name}.json`, title: name, ...schema };
}
