import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderSchema, schemasDir } from "../../../src/cli/write-schemas.js";
import { contracts, type ContractName } from "../../../src/domain/contracts/index.js";

describe("schemas/", () => {
  it.each(Object.keys(contracts) as ContractName[])(
    "%s.json matches the zod contract (run `npm run schemas`)",
    (name) => {
      expect(readFileSync(`${schemasDir}${name}.json`, "utf8")).toBe(renderSchema(name));
    },
  );
});
