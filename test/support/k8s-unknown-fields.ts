import * as k8s from "@kubernetes/client-node";

/**
 * Fields of a manifest that the Kubernetes API does not define (what `kubeconform -strict`
 * catches): the JSON schemas of kubernetes-models allow unknown properties, so a typo such as
 * `readinesProbe` would pass them and be dropped silently by the API server. The official
 * JavaScript client carries the field list and type of every core model
 * (`getAttributeTypeMap()`); walking the manifest against it finds every unknown key.
 */
interface Attribute {
  baseName: string;
  type: string;
}
interface ModelClass {
  getAttributeTypeMap(): Attribute[];
}
const models = k8s as unknown as Record<string, ModelClass | undefined>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Paths of fields that `type` (a client model name such as `V1Deployment`) does not define. */
export function unknownFields(value: unknown, type: string, path = ""): string[] {
  const element = /^Array<(.+)>$/.exec(type)?.[1];
  if (element !== undefined) {
    return Array.isArray(value)
      ? value.flatMap((item, i) => unknownFields(item, element, `${path}[${i}]`))
      : [];
  }
  const mapValue = /^\{ \[key: string\]: (.+); \}$/.exec(type)?.[1];
  if (mapValue !== undefined) {
    return isObject(value)
      ? Object.entries(value).flatMap(([key, inner]) => unknownFields(inner, mapValue, `${path}.${key}`))
      : [];
  }
  const model = models[type];
  // Scalars (string, number, boolean, Date, IntOrString, object, any) have no fields to check.
  if (typeof model?.getAttributeTypeMap !== "function" || !isObject(value)) return [];
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([key, inner]) => {
    const innerType = attributes.get(key);
    const at = path === "" ? key : `${path}.${key}`;
    return innerType === undefined ? [at] : unknownFields(inner, innerType, at);
  });
}

/** Whether the client knows `type`, so a caller can refuse to "check" against a missing model. */
export function hasModel(type: string): boolean {
  return typeof models[type]?.getAttributeTypeMap === "function";
}
