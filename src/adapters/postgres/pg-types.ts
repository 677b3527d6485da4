import pg from "pg";

type TextParser = (text: string) => unknown;

/** Postgres type ids of `real[]` and `double precision[]` (pg_type.oid). */
const floatArrayOids: readonly number[] = [1021, 1022];

const pgParser = (oid: number, format: "text" | "binary"): unknown =>
  (pg.types.getTypeParser as (oid: number, format: "text" | "binary") => unknown)(oid, format);

/**
 * A float array as Postgres prints it, `{0.1,-2.5e-05,…}`, read by splitting at the commas: 3–4×
 * faster than the generic array parser for a 384-dimension vector (42 against 155 µs), which
 * matters because every judgement reads up to 50 stored lessons' vectors. Anything else (NULL
 * elements, nested arrays, quoted elements) goes to the generic parser.
 */
export function parseFloatArray(text: string, fallback: TextParser): unknown {
  if (text === "{}") return [];
  if (!text.startsWith("{") || text.includes("{", 1) || text.includes("NULL") || text.includes('"'))
    return fallback(text);
  return text.slice(1, -1).split(",").map(Number);
}

/** The type parsers of every connection: pg's own, but float arrays parsed as above. */
export const pgTypes = {
  getTypeParser(oid: number, format: "text" | "binary" = "text"): unknown {
    if (format === "text" && floatArrayOids.includes(oid)) {
      const fallback = pgParser(oid, "text") as TextParser;
      return (text: string) => parseFloatArray(text, fallback);
    }
    return pgParser(oid, format);
  },
};
