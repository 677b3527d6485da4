import { lessonFields, operations, snakeCase, type Operation } from "../../src/client/wire.js";

/**
 * Does the TypeScript client cover the API as its OpenAPI document describes it? For each
 * operation the client calls: the path and method exist; the request body's fields and the query
 * parameters are the ones the client can send, both ways (deprecated ones left out; names compared
 * in snake_case, `k` as the old name of `limit`); the answer's fields the client reads exist when
 * the document describes the answer, and so do the fields of a lesson for a task.
 */
type Schema = Record<string, unknown> & {
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  deprecated?: boolean;
};
interface OperationObject {
  parameters?: { name: string; in: string; deprecated?: boolean; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, Schema> };
}

function resolve(doc: OpenApiDocument, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 20; i += 1) {
    const name = s.$ref.replace(/^#\/components\/schemas\//, "");
    s = doc.components?.schemas?.[name];
  }
  return s;
}

/** The object's fields (of every branch of a union), each with whether it is deprecated and required. */
function fieldsOf(doc: OpenApiDocument, schema: Schema | undefined) {
  const fields = new Map<string, { deprecated: boolean; required: boolean; schema: Schema }>();
  const visit = (raw: Schema | undefined) => {
    const s = resolve(doc, raw);
    if (!s) return;
    for (const branch of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) visit(branch);
    for (const [name, prop] of Object.entries(s.properties ?? {})) {
      const p = resolve(doc, prop) ?? prop;
      fields.set(name, {
        deprecated: p.deprecated === true || prop.deprecated === true,
        required: s.required?.includes(name) ?? false,
        schema: p,
      });
    }
  };
  visit(schema);
  return fields;
}

const wireName = (name: string) => (name === "k" ? "limit" : snakeCase(name));

function compare(what: string, documented: Iterable<string>, client: readonly string[]): string[] {
  const doc = new Set([...documented].map(wireName));
  const mine = new Set(client);
  return [
    ...[...doc].filter((f) => !mine.has(f)).map((f) => `${what}: the document's ${f} is not in the client`),
    ...[...mine].filter((f) => !doc.has(f)).map((f) => `${what}: the client's ${f} is not in the document`),
  ];
}

const jsonSchemaOf = (content: Record<string, { schema?: Schema }> | undefined) =>
  content?.["application/json"]?.schema;

export function clientCoverageProblems(
  doc: OpenApiDocument,
  options: { mayBeMissing?: readonly string[] } = {},
): { problems: string[]; answersChecked: number } {
  const problems: string[] = [];
  let answersChecked = 0;
  for (const [name, op] of Object.entries(operations) as [string, Operation][]) {
    const item = doc.paths[op.path]?.[op.method.toLowerCase()];
    const what = `${name} (${op.method} ${op.path})`;
    if (!item) {
      if (!options.mayBeMissing?.includes(name)) problems.push(`${what}: not in the document`);
      continue;
    }
    if (op.body) {
      const fields = fieldsOf(doc, jsonSchemaOf(item.requestBody?.content));
      const current = [...fields].filter(([, f]) => !f.deprecated).map(([n]) => n);
      problems.push(...compare(`${what} body`, current, op.body));
    }
    if (op.query) {
      const params = (item.parameters ?? []).filter((p) => p.in === "query" && !p.deprecated);
      problems.push(
        ...compare(
          `${what} query`,
          params.map((p) => p.name),
          op.query,
        ),
      );
    }
    const answer = fieldsOf(doc, jsonSchemaOf((item.responses?.["200"] ?? item.responses?.["201"])?.content));
    if (op.answer && answer.size > 0) {
      answersChecked += 1;
      const names = new Set([...answer.keys()].map(wireName));
      for (const field of op.answer) {
        if (!names.has(field))
          problems.push(`${what} answer: the client reads ${field}, the document has none`);
      }
      if (name === "lessonsForTask") {
        const lesson = fieldsOf(doc, resolve(doc, answer.get("lessons")?.schema)?.items);
        problems.push(...compare(`${what} answer's lessons`, lesson.keys(), lessonFields));
      }
    }
  }
  return { problems, answersChecked };
}
