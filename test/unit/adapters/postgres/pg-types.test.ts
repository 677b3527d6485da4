import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseFloatArray, pgTypes } from "../../../../src/adapters/postgres/pg-types.js";

const pgParser = (oid: number): unknown =>
  (pg.types.getTypeParser as (oid: number, format: "text") => unknown)(oid, "text");
const generic = pgParser(1021) as (text: string) => unknown;

describe("Postgres float arrays", () => {
  it("reads a vector as pg's generic parser does", () => {
    for (const text of ["{}", "{1}", "{0.1,-2.5e-05,3,-0}", "{1e+30,-1.5,NaN,Infinity,-Infinity}"]) {
      expect(parseFloatArray(text, generic)).toEqual(generic(text));
    }
  });

  it("leaves NULL elements and nested arrays to the generic parser", () => {
    expect(parseFloatArray("{1,NULL,2}", generic)).toEqual([1, null, 2]);
    expect(parseFloatArray("{{1,2},{3,4}}", generic)).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it("is what every connection uses for real[] and double precision[], and pg's parser otherwise", () => {
    const realArray = pgTypes.getTypeParser(1021, "text") as (text: string) => unknown;
    const doubleArray = pgTypes.getTypeParser(1022) as (text: string) => unknown;
    expect(realArray("{0.5,1.5}")).toEqual([0.5, 1.5]);
    expect(doubleArray("{0.25}")).toEqual([0.25]);
    expect(pgTypes.getTypeParser(23, "text")).toBe(pgParser(23));
  });
});
