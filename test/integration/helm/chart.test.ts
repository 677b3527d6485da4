import { readFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { ScaledObject, type IScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import {
  TriggerAuthentication,
  type ITriggerAuthentication,
} from "@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication";
import { PodMonitor, type IPodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import { PrometheusRule, type IPrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor, type IServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { Deployment, type IDeployment } from "kubernetes-models/apps/v1/Deployment";
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { NetworkPolicy, type INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget, type IPodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap, type IConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Service, type IService } from "kubernetes-models/v1/Service";
import { ServiceAccount, type IServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { envVariableNames, loadConfig } from "../../../src/config/config.js";
import { runsPeriodicReflection } from "../../../src/domain/select-for-reflection.js";
import { hasModel, unknownFields } from "../../support/k8s-unknown-fields.js";
import { helmEngines, umbrellaChart, type HelmEngine, type TemplateOptions } from "../../support/helm.js";

/**
 * Renders helm/reflector with Helm itself, once per Helm build this machine can run (see
 * test/support/helm.ts: Helm 3.10 from the npm registry, current Helm from Maven Central),
 * validates every manifest against the Kubernetes, KEDA and prometheus-operator JSON schemas
 * that the kubernetes-models packages ship and against the Kubernetes client's field lists,
 * then checks what operators rely on.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url));
const chart = `${root}helm/reflector`;

// Each model's validate() runs the JSON schema of its kind and throws on the first violation.
const models = {
  Deployment: (m: unknown) => new Deployment(m as IDeployment),
  Service: (m: unknown) => new Service(m as IService),
  ConfigMap: (m: unknown) => new ConfigMap(m as IConfigMap),
  ServiceAccount: (m: unknown) => new ServiceAccount(m as IServiceAccount),
  HorizontalPodAutoscaler: (m: unknown) => new HorizontalPodAutoscaler(m as IHorizontalPodAutoscaler),
  PodDisruptionBudget: (m: unknown) => new PodDisruptionBudget(m as IPodDisruptionBudget),
  NetworkPolicy: (m: unknown) => new NetworkPolicy(m as INetworkPolicy),
  ScaledObject: (m: unknown) => new ScaledObject(m as IScaledObject),
  TriggerAuthentication: (m: unknown) => new TriggerAuthentication(m as ITriggerAuthentication),
  ServiceMonitor: (m: unknown) => new ServiceMonitor(m as IServiceMonitor),
  PodMonitor: (m: unknown) => new PodMonitor(m as IPodMonitor),
  PrometheusRule: (m: unknown) => new PrometheusRule(m as IPrometheusRule),
};
type Kind = keyof typeof models;
type Model<K extends Kind> = ReturnType<(typeof models)[K]>;
// Core kinds are also checked for fields Kubernetes does not define (kubeconform -strict);
// the CRD kinds are checked by their schemas only.
const clientModels: Partial<Record<Kind, string>> = {
  Deployment: "V1Deployment",
  Service: "V1Service",
  ConfigMap: "V1ConfigMap",
  ServiceAccount: "V1ServiceAccount",
  HorizontalPodAutoscaler: "V2HorizontalPodAutoscaler",
  PodDisruptionBudget: "V1PodDisruptionBudget",
  NetworkPolicy: "V1NetworkPolicy",
};
const apiVersions: Record<Kind, string> = {
  Deployment: "apps/v1",
  Service: "v1",
  ConfigMap: "v1",
  ServiceAccount: "v1",
  HorizontalPodAutoscaler: "autoscaling/v2",
  PodDisruptionBudget: "policy/v1",
  NetworkPolicy: "networking.k8s.io/v1",
  ScaledObject: "keda.sh/v1alpha1",
  TriggerAuthentication: "keda.sh/v1alpha1",
  ServiceMonitor: "monitoring.coreos.com/v1",
  PodMonitor: "monitoring.coreos.com/v1",
  PrometheusRule: "monitoring.coreos.com/v1",
};

interface Rendered {
  apiVersion: string;
  kind: string;
  [field: string]: unknown;
}

/** Validates one manifest against the schema of its apiVersion and kind; unknown kinds fail. */
function validate(manifest: Rendered): void {
  const kind = manifest.kind as Kind;
  if (!(kind in models) || apiVersions[kind] !== manifest.apiVersion) {
    throw new Error(`no schema for ${manifest.apiVersion}/${manifest.kind}: add its model to the validators`);
  }
  models[kind](manifest).validate();
  const clientModel = clientModels[kind];
  if (clientModel !== undefined) {
    if (!hasModel(clientModel)) throw new Error(`@kubernetes/client-node has no model ${clientModel}`);
    const unknown = unknownFields(manifest, clientModel);
    if (unknown.length > 0) throw new Error(`${kind} has fields Kubernetes does not define: ${unknown.join(", ")}`);
  }
}

function render(helm: HelmEngine, options: TemplateOptions = {}, chartDir = chart): Rendered[] {
  const result = helm.template(chartDir, options);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  const manifests = parseAllDocuments(result.stdout)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${String(doc.errors[0]?.message)}`);
      return doc.toJS() as Rendered | null;
    })
    .filter((m): m is Rendered => m !== null);
  for (const manifest of manifests) validate(manifest);
  return manifests;
}

/**
 * A deployment against a secured Kafka, registry and stores: SASL credentials from the Secret a
 * Strimzi KafkaUser makes, registry credentials from the chart's Secret, PEM files from a
 * cert-manager-style Secret.
 */
const securedValues: Record<string, string | boolean> = {
  "config.KAFKA_SSL": "true",
  "config.KAFKA_SASL_MECHANISM": "scram-sha-512",
  "config.SCHEMA_REGISTRY_URL": "https://registry.example/apis/ccompat/v7",
  "secretEnv.KAFKA_SASL_USERNAME.secret": "reflector-kafka-user",
  "secretEnv.KAFKA_SASL_USERNAME.key": "username",
  "secretEnv.KAFKA_SASL_PASSWORD.secret": "reflector-kafka-user",
  "secretEnv.KAFKA_SASL_PASSWORD.key": "password",
  "secretEnv.SCHEMA_REGISTRY_USERNAME.key": "SCHEMA_REGISTRY_USERNAME",
  "secretEnv.SCHEMA_REGISTRY_PASSWORD.key": "SCHEMA_REGISTRY_PASSWORD",
  "tls.existingSecret": "reflector-tls",
  "tls.files.KAFKA_SSL_CA_FILE": "ca.crt",
  "tls.files.KAFKA_SSL_CERT_FILE": "tls.crt",
  "tls.files.KAFKA_SSL_KEY_FILE": "tls.key",
  "tls.files.SCHEMA_REGISTRY_CA_FILE": "ca.crt",
  "tls.files.DATABASE_SSL_CA_FILE": "ca.crt",
  "tls.files.REDIS_TLS_CA_FILE": "ca.crt",
};

const byKind = (manifests: Rendered[], kind: Kind) => manifests.filter((m) => m.kind === kind);

/** The one manifest of a kind, as its typed model. */
function one<K extends Kind>(manifests: Rendered[], kind: K): Model<K> {
  const found = byKind(manifests, kind);
  if (found.length !== 1 || !found[0]) throw new Error(`expected one ${kind}, rendered ${found.length}`);
  return models[kind](structuredClone(found[0])) as Model<K>;
}

function must<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`rendered manifest has no ${what}`);
  return value;
}

function podSpec(manifests: Rendered[]) {
  return must(one(manifests, "Deployment").spec?.template.spec, "pod spec");
}
function mainContainer(manifests: Rendered[]) {
  return must(podSpec(manifests).containers[0], "container");
}
/** The pods' settings: the ConfigMap that is not the Grafana dashboard's. */
function settingsMap(manifests: Rendered[]) {
  const found = byKind(manifests, "ConfigMap").filter((m) => !isDashboard(m));
  if (found.length !== 1 || !found[0]) throw new Error(`expected one settings ConfigMap, rendered ${found.length}`);
  return models.ConfigMap(structuredClone(found[0]));
}
function isDashboard(manifest: Rendered): boolean {
  return (manifest.metadata as { name?: string } | undefined)?.name?.endsWith("-dashboard") ?? false;
}
function configData(manifests: Rendered[]): Record<string, string> {
  return must(settingsMap(manifests).data, "ConfigMap data");
}

describe.each(helmEngines().map((engine) => [engine.name, engine] as const))(
  "Helm chart helm/reflector rendered by %s",
  (_name, helm) => {
  let defaults: Rendered[];
  let kedaOff: Rendered[];

  beforeAll(() => {
    helm.ensure();
    defaults = render(helm);
    kedaOff = render(helm, { set: { "autoscaling.keda.enabled": false } });
  }, 330_000);

  it("is linted clean by Helm (strict), with default and with secured values", () => {
    expect(helm.version()).toMatch(/^v3\./);
    for (const set of [{}, securedValues]) {
      const lint = helm.lint(chart, { set });
      expect(lint.status, lint.stdout + lint.stderr).toBe(0);
      expect(lint.stdout).not.toMatch(/\[(ERROR|WARNING)\]/);
    }
  });

  it("takes every credential from a Secret and mounts the PEM files in every container", () => {
    const secured = render(helm, { set: securedValues });
    const spec = podSpec(secured);
    const containers = [...(spec.initContainers ?? []), ...spec.containers];
    expect(containers.map((c) => c.name)).toEqual(["migrate", "topics", "reflector"]);
    for (const container of containers) {
      const env = new Map((container.env ?? []).map((e) => [e.name, e]));
      for (const [name, secret, key] of [
        ["KAFKA_SASL_USERNAME", "reflector-kafka-user", "username"],
        ["KAFKA_SASL_PASSWORD", "reflector-kafka-user", "password"],
        ["SCHEMA_REGISTRY_USERNAME", "reflector", "SCHEMA_REGISTRY_USERNAME"],
        ["SCHEMA_REGISTRY_PASSWORD", "reflector", "SCHEMA_REGISTRY_PASSWORD"],
        // The migrations run as their own database user.
        ["DATABASE_URL", "reflector", container.name === "migrate" ? "MIGRATION_DATABASE_URL" : "DATABASE_URL"],
      ] as const) {
        expect(env.get(name)?.valueFrom?.secretKeyRef, `${container.name} ${name}`).toMatchObject({ name: secret, key });
      }
      expect(env.get("KAFKA_SSL_CA_FILE")?.value).toBe("/etc/reflector/tls/ca.crt");
      expect(env.get("KAFKA_SSL_CERT_FILE")?.value).toBe("/etc/reflector/tls/tls.crt");
      expect(env.get("KAFKA_SSL_KEY_FILE")?.value).toBe("/etc/reflector/tls/tls.key");
      for (const name of ["SCHEMA_REGISTRY_CA_FILE", "DATABASE_SSL_CA_FILE", "REDIS_TLS_CA_FILE"]) {
        expect(env.get(name)?.value, name).toBe("/etc/reflector/tls/ca.crt");
      }
      expect(container.volumeMounts).toContainEqual({ name: "tls", mountPath: "/etc/reflector/tls", readOnly: true });
    }
    const volume = (spec.volumes ?? []).find((v) => v.name === "tls");
    expect(volume?.secret).toEqual({ secretName: "reflector-tls", defaultMode: 0o440 });
    // No credential reaches the ConfigMap; what does is what config.ts reads.
    const data = configData(secured);
    expect(data).toMatchObject({ KAFKA_SSL: "true", KAFKA_SASL_MECHANISM: "scram-sha-512" });
    const env = mainContainer(secured).env ?? [];
    const names = [...Object.keys(data), ...env.map((e) => e.name)];
    expect(names.filter((n) => !(envVariableNames as readonly string[]).includes(n))).toEqual([]);
    const literal = env.filter((e) => e.value !== undefined).map((e) => e.name);
    expect(literal.filter((name) => !name.endsWith("_FILE")), "only file paths are literal").toEqual([]);
    // Plaintext deployments render no tls volume and no *_FILE variable.
    expect((podSpec(defaults).volumes ?? []).map((v) => v.name)).toEqual(["tmp"]);
  });

  it("gives the KEDA trigger the pods' Kafka credentials", () => {
    const secured = render(helm, { set: securedValues });
    const auth = one(secured, "TriggerAuthentication");
    const triggers = one(secured, "ScaledObject").spec.triggers;
    expect(triggers).toHaveLength(2);
    for (const trigger of triggers) {
      expect(trigger.authenticationRef?.name).toBe(auth.metadata?.name);
      expect(trigger.metadata).toMatchObject({ sasl: "scram_sha512", tls: "enable" });
    }
    const refs = new Map((auth.spec.secretTargetRef ?? []).map((r) => [r.parameter, { name: r.name, key: r.key }]));
    expect(Object.fromEntries(refs)).toEqual({
      username: { name: "reflector-kafka-user", key: "username" },
      password: { name: "reflector-kafka-user", key: "password" },
      ca: { name: "reflector-tls", key: "ca.crt" },
      cert: { name: "reflector-tls", key: "tls.crt" },
      key: { name: "reflector-tls", key: "tls.key" },
    });

    const plain = render(helm, { set: { "config.KAFKA_SASL_MECHANISM": "plain", "secretEnv.KAFKA_SASL_USERNAME.key": "u", "secretEnv.KAFKA_SASL_PASSWORD.key": "p" } });
    const plainTrigger = must(one(plain, "ScaledObject").spec.triggers[0], "trigger");
    expect(plainTrigger.metadata).toMatchObject({ sasl: "plaintext", tls: "disable" });
    const plainRefs = (one(plain, "TriggerAuthentication").spec.secretTargetRef ?? []).map((r) => r.parameter);
    expect(plainRefs.sort()).toEqual(["password", "username"]);

    const own = render(helm, { set: { ...securedValues, "autoscaling.keda.authenticationRef": "platform-kafka" } });
    expect(byKind(own, "TriggerAuthentication")).toEqual([]);
    expect(one(own, "ScaledObject").spec.triggers.map((t) => t.authenticationRef?.name)).toEqual([
      "platform-kafka",
      "platform-kafka",
    ]);
    expect(byKind(defaults, "TriggerAuthentication")).toEqual([]);
    // TLS with the system's CAs needs no secret: the trigger says `tls: enable` and takes no auth.
    const publicTls = render(helm, { set: { "config.KAFKA_SSL": "true" } });
    expect(byKind(publicTls, "TriggerAuthentication")).toEqual([]);
    const publicTrigger = must(one(publicTls, "ScaledObject").spec.triggers[0], "trigger");
    expect(publicTrigger.metadata).toMatchObject({ sasl: "none", tls: "enable" });
    expect(publicTrigger.authenticationRef).toBeUndefined();
    for (const trigger of one(defaults, "ScaledObject").spec.triggers) expect(trigger.authenticationRef).toBeUndefined();
  });

  it("scales on every topic the group reads when tenants are bound to topics", () => {
    expect(must(one(defaults, "ScaledObject").spec.triggers[0], "trigger").metadata).toMatchObject({
      topic: "agent.task.completed",
    });
    const bound = render(helm, { set: { "config.TENANT_TOPIC_BINDING": "acme=agents.acme." } });
    expect(one(bound, "ScaledObject").spec.triggers, "one trigger: every topic the group reads").toHaveLength(1);
    const trigger = must(one(bound, "ScaledObject").spec.triggers[0], "trigger");
    expect(trigger.metadata).not.toHaveProperty("topic");
    expect(trigger.metadata).toMatchObject({ consumerGroup: "reflector" });
  });

  it("refuses secured values the pods could not start with", () => {
    const noUser = helm.template(chart, { set: { "config.KAFKA_SASL_MECHANISM": "scram-sha-256" } });
    expect(noUser.status).toBe(1);
    expect(noUser.stderr).toMatch(/add KAFKA_SASL_USERNAME to secretEnv/);
    const noSecret = helm.template(chart, { set: { "tls.files.KAFKA_SSL_CA_FILE": "ca.crt" } });
    expect(noSecret.status).toBe(1);
    expect(noSecret.stderr).toMatch(/set tls.existingSecret/);
    const passwordInConfigMap = helm.template(chart, { set: { "config.KAFKA_SASL_PASSWORD": "hunter2" } });
    expect(passwordInConfigMap.status).toBe(1);
    expect(passwordInConfigMap.stderr).toMatch(/schema[\s\S]*KAFKA_SASL_PASSWORD/);
    const badMechanism = helm.template(chart, { set: { "config.KAFKA_SASL_MECHANISM": "gssapi" } });
    expect(badMechanism.status).toBe(1);
  });

  it("renders every object with default values, each valid against its schema", () => {
    expect(defaults.map((m) => m.kind).sort()).toEqual(
      [
        "ConfigMap",
        "ConfigMap",
        "Deployment",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "PrometheusRule",
        "ScaledObject",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
      ].sort(),
    );
  });

  it("rejects a manifest that breaks its schema, has an unknown field or has no schema (the validators are live)", () => {
    const deployment = must(byKind(defaults, "Deployment")[0], "Deployment");
    expect(() => {
      validate({ ...deployment, spec: { ...(deployment.spec as object), replicas: "two" } });
    }).toThrow(/replicas/);
    const scaledObject = must(byKind(defaults, "ScaledObject")[0], "ScaledObject");
    const badTrigger = { type: "kafka", metadata: { topic: "t", lagThreshold: 50 } };
    expect(() => {
      validate({ ...scaledObject, spec: { ...(scaledObject.spec as object), triggers: [badTrigger] } });
    }).toThrow(/lagThreshold/);
    const typo = structuredClone(deployment) as Rendered & { spec: { template: { spec: { containers: object[] } } } };
    const [container] = typo.spec.template.spec.containers;
    typo.spec.template.spec.containers = [{ ...container, readinesProbe: { httpGet: { path: "/readyz" } } }];
    expect(() => {
      validate(typo);
    }).toThrow(/spec\.template\.spec\.containers\[0\]\.readinesProbe/);
    expect(() => {
      validate({ apiVersion: "batch/v1", kind: "CronJob" });
    }).toThrow(/no schema/);
  });

  it("probes /healthz for liveness and /readyz for readiness, and runs non-root on a read-only root", () => {
    const pod = podSpec(defaults);
    const container = mainContainer(defaults);
    expect(container.livenessProbe?.httpGet?.path).toBe("/healthz");
    expect(container.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(container.resources?.requests).toBeDefined();
    expect(container.resources?.limits?.memory).toBeDefined();
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
    const initContainers = pod.initContainers ?? [];
    for (const c of [...pod.containers, ...initContainers]) {
      expect(c.securityContext?.readOnlyRootFilesystem, c.name).toBe(true);
      expect(c.securityContext?.allowPrivilegeEscalation, c.name).toBe(false);
    }
    expect(initContainers.map((c) => c.args?.[0])).toEqual(["migrate", "topics"]);
  });

  it("gives a stopping pod longer than its drain deadline", () => {
    const deadlineMs = Number(configData(defaults).SHUTDOWN_DEADLINE_MS);
    expect(deadlineMs).toBeGreaterThan(0);
    expect(must(podSpec(defaults).terminationGracePeriodSeconds, "grace period") * 1000).toBeGreaterThan(deadlineMs);
    const tooShort = helm.template(chart, { set: { terminationGracePeriodSeconds: 20 } });
    expect(tooShort.status).toBe(1);
    expect(tooShort.stderr).toMatch(/terminationGracePeriodSeconds \(20\) must be longer than shutdownDeadlineMs/);
  });

  it("configures the pods only with variables config.ts reads, secrets by reference", () => {
    const data = configData(defaults);
    const container = mainContainer(defaults);
    expect(container.envFrom).toEqual([{ configMapRef: { name: settingsMap(defaults).metadata?.name } }]);
    const secretEnv = new Map((container.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef]));
    expect([...secretEnv.keys()].sort()).toEqual(["API_KEYS", "DATABASE_URL", "OPENAI_API_KEY", "REDIS_URL"]);
    for (const ref of secretEnv.values()) expect(ref?.name).toBe("reflector");
    expect(secretEnv.get("DATABASE_URL")?.optional).toBe(false);
    expect(secretEnv.get("OPENAI_API_KEY")?.optional).toBe(true);

    const names = [...Object.keys(data), ...secretEnv.keys()];
    expect(names.filter((n) => !(envVariableNames as readonly string[]).includes(n))).toEqual([]);
    const config = loadConfig({
      ...data,
      DATABASE_URL: "postgres://reflector@db:5432/reflector",
      REDIS_URL: "redis://cache:6379/0",
    });
    expect(config.shutdownDeadlineMs).toBe(25_000);
  });

  it("dreams and prunes on a schedule in a default install (full mode), and turns either off with 0", () => {
    const config = loadConfig({
      ...configData(defaults),
      DATABASE_URL: "postgres://reflector@db:5432/reflector",
      REDIS_URL: "redis://cache:6379/0",
    });
    expect(config.mode).toBe("full");
    expect(runsPeriodicReflection(config.mode)).toBe(true);
    expect(config.maintenance.dreamIntervalMs).toBe(6 * 3_600_000);
    expect(config.maintenance.pruneIntervalMs).toBe(24 * 3_600_000);
    const off = configData(render(helm, { set: { "config.DREAM_INTERVAL_MS": "0", "config.PRUNE_INTERVAL_MS": "0" } }));
    expect([off.DREAM_INTERVAL_MS, off.PRUNE_INTERVAL_MS]).toEqual(["0", "0"]);
  });

  it("scales on the consumer group's lag with KEDA by default, aimed at the group the pods join", () => {
    const deployment = one(defaults, "Deployment");
    const data = configData(defaults);
    const scaledObject = one(defaults, "ScaledObject");
    expect(byKind(defaults, "HorizontalPodAutoscaler")).toEqual([]);
    expect(deployment.spec?.replicas, "the autoscaler owns replicas").toBeUndefined();
    expect(scaledObject.spec.scaleTargetRef.name).toBe(deployment.metadata?.name);
    const trigger = must(scaledObject.spec.triggers[0], "trigger");
    expect(trigger.type).toBe("kafka");
    expect(trigger.metadata).toMatchObject({
      bootstrapServers: data.KAFKA_BROKERS,
      consumerGroup: data.KAFKA_GROUP_ID,
      topic: data.TOPIC_TASK_COMPLETED,
    });
    expect(Number(trigger.metadata.lagThreshold)).toBeGreaterThan(0);
    expect(scaledObject.spec.maxReplicaCount).toBeLessThanOrEqual(Number(data.TOPIC_PARTITIONS));
    // While KEDA cannot read the lag it holds a fixed size instead of scaling blind.
    expect(scaledObject.spec.fallback?.replicas).toBeGreaterThan(0);
  });

  it("falls back to an HPA when KEDA is off, never both", () => {
    const deployment = one(kedaOff, "Deployment");
    expect(byKind(kedaOff, "ScaledObject")).toEqual([]);
    const hpa = one(kedaOff, "HorizontalPodAutoscaler");
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: deployment.metadata?.name,
    });
    expect(deployment.spec?.replicas).toBeUndefined();

    const fixed = render(helm, { set: { "autoscaling.enabled": false, replicaCount: 3 } });
    expect(byKind(fixed, "ScaledObject")).toEqual([]);
    expect(byKind(fixed, "HorizontalPodAutoscaler")).toEqual([]);
    expect(one(fixed, "Deployment").spec?.replicas).toBe(3);
  });

  it("selects its own pods from the Service, PDB, NetworkPolicy and ServiceMonitor", () => {
    for (const manifests of [defaults, kedaOff]) {
      const podLabels = must(one(manifests, "Deployment").spec?.template.metadata?.labels, "pod labels");
      const matches = (selector: Record<string, string> | undefined) =>
        Object.keys(selector ?? {}).length > 0 &&
        Object.entries(selector ?? {}).every(([k, v]) => podLabels[k] === v);
      const service = one(manifests, "Service");
      expect(matches(service.spec?.selector)).toBe(true);
      const pdb = one(manifests, "PodDisruptionBudget");
      expect(matches(pdb.spec?.selector?.matchLabels)).toBe(true);
      expect(pdb.spec?.maxUnavailable).toBe(1);
      const policy = one(manifests, "NetworkPolicy");
      expect(matches(policy.spec?.podSelector?.matchLabels)).toBe(true);
      expect(policy.spec?.ingress?.[0]?.ports).toEqual([{ port: "http", protocol: "TCP" }]);
      expect(policy.spec?.policyTypes).toEqual(["Ingress", "Egress"]);
      const monitor = one(manifests, "ServiceMonitor");
      expect(matches(monitor.spec.selector.matchLabels)).toBe(true);
      expect(monitor.spec.endpoints[0]).toMatchObject({ port: service.spec?.ports?.[0]?.name, path: "/metrics" });
    }
  });

  it("ships the alert rules of ops/prometheus as its PrometheusRule", () => {
    const rules = parse(readFileSync(`${root}ops/prometheus/reflector-rules.yaml`, "utf8")) as { groups: unknown[] };
    expect(one(defaults, "PrometheusRule").spec.groups).toEqual(rules.groups);
    const linked = render(helm, { set: { "prometheusRule.runbookBaseUrl": "https://git.example/reflector/blob/main/" } });
    const urls = (one(linked, "PrometheusRule").spec.groups ?? []).flatMap((g) =>
      (g.rules ?? []).map((r) => r.annotations?.runbook_url),
    );
    expect(urls.length).toBe(rules.groups.flatMap((g) => (g as { rules: unknown[] }).rules).length);
    for (const url of urls) {
      expect(url).toMatch(/^https:\/\/git\.example\/reflector\/blob\/main\/docs\/operations\.md#reflector/);
    }
  });

  it("never opens the HTTP port to every pod and client: an empty ingressFrom means the release's namespace", () => {
    const ingress = (manifests: Rendered[]) => one(manifests, "NetworkPolicy").spec?.ingress ?? [];
    expect(ingress(defaults).map((rule) => rule.from)).toEqual([[{ podSelector: {} }]]);
    const peers = render(helm, {
      set: { "networkPolicy.ingressFrom[0].namespaceSelector.matchLabels.name": "monitoring" },
    });
    expect(ingress(peers)[0]?.from).toEqual([{ namespaceSelector: { matchLabels: { name: "monitoring" } } }]);
    const open = render(helm, { set: { "networkPolicy.allowFromAnywhere": true } });
    expect(ingress(open)[0]?.from).toBeUndefined();
  });

  it("runs the migrations as their own database user, the pods with theirs", () => {
    const databaseUrl = (container: { env?: { name: string; valueFrom?: { secretKeyRef?: { key: string } } }[] }) =>
      container.env?.find((e) => e.name === "DATABASE_URL")?.valueFrom?.secretKeyRef?.key;
    const init = podSpec(defaults).initContainers ?? [];
    expect(databaseUrl(must(init.find((c) => c.name === "migrate"), "migrate container"))).toBe(
      "MIGRATION_DATABASE_URL",
    );
    expect(databaseUrl(must(init.find((c) => c.name === "topics"), "topics container"))).toBe("DATABASE_URL");
    expect(databaseUrl(mainContainer(defaults))).toBe("DATABASE_URL");
    const same = render(helm, { set: { "init.migrateDatabaseUrl.key": "" } });
    const sameInit = podSpec(same).initContainers ?? [];
    expect(databaseUrl(must(sameInit.find((c) => c.name === "migrate"), "migrate container"))).toBe("DATABASE_URL");
  });

  it("runs the OTLP bridge as its own Deployment on request; the processor's pods then leave OTLP_TOPIC unset", () => {
    const inProcess = render(helm, { set: { "config.OTLP_TOPIC": "otlp_spans" } });
    expect(byKind(inProcess, "Deployment")).toHaveLength(1);
    const separate = render(helm, { set: { "config.OTLP_TOPIC": "otlp_spans", "otlpBridge.mode": "deployment" } });
    const deployments = byKind(separate, "Deployment").map((d) => models.Deployment(structuredClone(d)));
    expect(deployments).toHaveLength(2);
    const bridge = must(
      deployments.find((d) => d.metadata?.name?.endsWith("-otlp-bridge")),
      "the bridge's Deployment",
    );
    const processor = must(
      deployments.find((d) => d !== bridge),
      "the processor's Deployment",
    );
    const bridgeContainer = must(bridge.spec?.template.spec?.containers[0], "bridge container");
    expect(bridgeContainer.args).toEqual(["otlp-bridge"]);
    expect(bridgeContainer.env?.some((e) => e.name === "OTLP_TOPIC")).toBe(false);
    const processorContainer = must(processor.spec?.template.spec?.containers[0], "processor container");
    expect(processorContainer.env?.find((e) => e.name === "OTLP_TOPIC")).toEqual({ name: "OTLP_TOPIC", value: "" });
    // Nothing of the processor's selects the bridge's pods: not its Deployment, Service or PDB.
    const bridgeLabels = must(bridge.spec?.template.metadata?.labels, "bridge pod labels");
    const selects = (selector: Record<string, string> | undefined) =>
      Object.entries(selector ?? {}).every(([k, v]) => bridgeLabels[k] === v);
    expect(selects(processor.spec?.selector.matchLabels)).toBe(false);
    expect(selects(one(separate, "Service").spec?.selector)).toBe(false);
    expect(selects(one(separate, "PodDisruptionBudget").spec?.selector?.matchLabels)).toBe(false);
  });

  it("runs the image by its digest when image.digest is set, and refuses a digest that is not one", () => {
    const images = (manifests: Rendered[]) =>
      byKind(manifests, "Deployment").flatMap((d) => {
        const spec = models.Deployment(structuredClone(d)).spec?.template.spec;
        return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].map((c) => c.image);
      });
    expect(images(defaults).every((image) => /^ghcr\.io\/example\/reflector:[^@]+$/.test(image ?? ""))).toBe(true);
    const digest = `sha256:${"ab12".repeat(16)}`;
    const pinned = render(helm, {
      set: { "image.digest": digest, "image.tag": "moved", "config.OTLP_TOPIC": "otlp_spans", "otlpBridge.mode": "deployment" },
    });
    const all = images(pinned);
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(new Set(all)).toEqual(new Set([`ghcr.io/example/reflector@${digest}`]));
    const notADigest = helm.template(chart, { set: { "image.digest": "latest" } });
    expect(notADigest.status).toBe(1);
    expect(notADigest.stderr).toMatch(/digest/);
  });

  it("refuses values its schema does not allow", () => {
    const unknownKey = helm.template(chart, { set: { replicaCont: 3 } });
    expect(unknownKey.status).toBe(1);
    expect(unknownKey.stderr).toMatch(/replicaCont/);
    const secretInConfigMap = helm.template(chart, { set: { "config.DATABASE_URL": "postgres://x@y/z" } });
    expect(secretInConfigMap.status).toBe(1);
    expect(secretInConfigMap.stderr).toMatch(/schema[\s\S]*DATABASE_URL/);
  });

  it("renders as a subchart of an umbrella chart, with the umbrella's globals, and leaves itself out when not enabled", () => {
    const umbrella = umbrellaChart(chart, {
      global: { region: "eu-west-1", imageRegistry: "registry.example" },
      reflector: { config: { KAFKA_BROKERS: "kafka.platform:9092" }, podDisruptionBudget: { maxUnavailable: 2 } },
    });
    try {
      const lint = helm.lint(umbrella);
      expect(lint.status, lint.stdout + lint.stderr).toBe(0);
      expect(lint.stdout).not.toMatch(/\[(ERROR|WARNING)\]/);
      const manifests = render(helm, { name: "platform" }, umbrella);
      const ownKinds = manifests.filter((m) => (m.metadata as { name?: string }).name !== "platform-platform");
      expect(ownKinds.map((m) => m.kind).sort()).toEqual(defaults.map((m) => m.kind).sort());
      expect(configData(ownKinds).KAFKA_BROKERS).toBe("kafka.platform:9092");
      expect(one(manifests, "Deployment").metadata?.name).toBe("platform-reflector");
      expect(one(manifests, "PodDisruptionBudget").spec?.maxUnavailable).toBe(2);
      const umbrellaMap = manifests.find((m) => (m.metadata as { name?: string }).name === "platform-platform");
      expect(umbrellaMap?.data).toEqual({ region: "eu-west-1" });

      const off = render(helm, { name: "platform", set: { "reflector.enabled": false } }, umbrella);
      expect(off.map((m) => `${m.kind}/${(m.metadata as { name?: string }).name}`)).toEqual(["ConfigMap/platform-platform"]);
      // The subchart's schema still holds inside the umbrella.
      const typo = helm.template(umbrella, { name: "platform", set: { "reflector.replicaCont": 3 } });
      expect(typo.status).toBe(1);
      expect(typo.stderr).toMatch(/replicaCont/);
    } finally {
      rmSync(dirname(umbrella), { recursive: true, force: true });
    }
    // Standalone, `global` and `enabled` are accepted too.
    expect(render(helm, { set: { "global.region": "eu-west-1", enabled: true } }).length).toBe(defaults.length);
  });

  it("adds extraEnv, extraEnvFrom, extraVolumes and extraVolumeMounts to every container of the processor and the bridge", () => {
    const extra = render(helm, {
      set: {
        "extraEnv[0].name": "NODE_OPTIONS",
        "extraEnv[0].value": "--max-old-space-size=768",
        "extraEnv[1].name": "OPENAI_BASE_URL",
        "extraEnv[1].valueFrom.configMapKeyRef.name": "llm-gateway",
        "extraEnv[1].valueFrom.configMapKeyRef.key": "url",
        "extraEnvFrom[0].secretRef.name": "reflector-extra",
        "extraVolumes[0].name": "corporate-ca",
        "extraVolumes[0].configMap.name": "corporate-ca-bundle",
        "extraVolumeMounts[0].name": "corporate-ca",
        "extraVolumeMounts[0].mountPath": "/etc/ssl/corporate",
        "extraVolumeMounts[0].readOnly": true,
        "config.OTLP_TOPIC": "otlp_spans",
        "otlpBridge.mode": "deployment",
      },
    });
    const deployments = byKind(extra, "Deployment").map((d) => models.Deployment(structuredClone(d)));
    expect(deployments).toHaveLength(2);
    const names: string[] = [];
    for (const deployment of deployments) {
      const spec = must(deployment.spec?.template.spec, "pod spec");
      expect(spec.volumes).toContainEqual({ name: "corporate-ca", configMap: { name: "corporate-ca-bundle" } });
      expect(spec.volumes?.map((v) => v.name)).toContain("tmp");
      for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
        names.push(container.name);
        const env = new Map((container.env ?? []).map((e) => [e.name, e]));
        expect(env.get("NODE_OPTIONS")?.value, container.name).toBe("--max-old-space-size=768");
        expect(env.get("OPENAI_BASE_URL")?.valueFrom?.configMapKeyRef, container.name).toEqual({ name: "llm-gateway", key: "url" });
        expect(env.has("DATABASE_URL"), "the chart's own env stays").toBe(true);
        expect(container.envFrom?.[0]?.configMapRef, "the chart's ConfigMap first").toBeDefined();
        expect(container.envFrom?.[1]).toEqual({ secretRef: { name: "reflector-extra" } });
        expect(container.volumeMounts).toContainEqual({ name: "corporate-ca", mountPath: "/etc/ssl/corporate", readOnly: true });
      }
    }
    expect(names.sort()).toEqual(["migrate", "otlp-bridge", "reflector", "topics"]);
    expect(byKind(defaults, "Deployment").flatMap((d) => JSON.stringify(d).match(/NODE_OPTIONS|corporate/g) ?? [])).toEqual([]);

    // A secret setting is never a literal value, a volume never shadows the chart's own, a mount needs a path.
    for (const set of [
      { "extraEnv[0].name": "DATABASE_URL", "extraEnv[0].value": "postgres://u:p@db/reflector" },
      { "extraEnv[0].name": "FOO", "extraEnv[0].value": "a", "extraEnv[0].valueFrom.secretKeyRef.name": "s" },
      { "extraVolumes[0].name": "tmp", "extraVolumes[0].emptyDir.medium": "Memory" },
      { "extraVolumeMounts[0].name": "ca" },
      { "extraEnvFrom[0].prefix": "X_", "extraEnvFrom[0].secretRef": "not-an-object" },
    ] as Record<string, string>[]) {
      const refused = helm.template(chart, { set });
      expect(refused.status, JSON.stringify(set)).toBe(1);
      expect(refused.stderr, JSON.stringify(set)).toMatch(/schema|extra/i);
    }
    const byReference = render(helm, {
      set: { "extraEnv[0].name": "DATABASE_URL", "extraEnv[0].valueFrom.secretKeyRef.name": "db", "extraEnv[0].valueFrom.secretKeyRef.key": "url" },
    });
    expect(mainContainer(byReference).env?.at(-1)).toMatchObject({ name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "db" } } });
  });

  it("serves OTLP/HTTP when otlpHttp is on: its topic, a required API key, a NetworkPolicy rule; refuses what would serve nothing", () => {
    const agents = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "agents" } } };
    const on = render(helm, {
      set: {
        "otlpHttp.enabled": true,
        "otlpHttp.ingressFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name": "agents",
      },
    });
    const data = configData(on);
    expect(data.OTLP_TOPIC).toBe("otlp_spans");
    expect(byKind(on, "Deployment"), "the bridge runs in the processor's pods").toHaveLength(1);
    const env = mainContainer(on).env ?? [];
    expect(env.find((e) => e.name === "OTLP_TOPIC"), "not unset in the processor").toBeUndefined();
    expect(env.find((e) => e.name === "API_KEYS")?.valueFrom?.secretKeyRef).toEqual({
      name: "reflector",
      key: "API_KEYS",
      optional: false,
    });
    // What the processor makes of it: the bridge runs, and so does POST /v1/traces.
    const config = loadConfig({
      ...data,
      DATABASE_URL: "postgres://reflector@db:5432/reflector",
      REDIS_URL: "redis://cache:6379/0",
      API_KEYS: "k3y-for-agents:acme:decide",
    });
    expect(config.otlp.topic).toBe("otlp_spans");
    const ingress = one(on, "NetworkPolicy").spec?.ingress ?? [];
    expect(ingress).toHaveLength(2);
    expect(ingress[1]).toEqual({ ports: [{ port: "http", protocol: "TCP" }], from: [agents] });
    expect(ingress[0]?.from, "the default rule stays").toEqual([{ podSelector: {} }]);

    // Off (the default): no topic, the key optional, one rule.
    expect(configData(defaults)).not.toHaveProperty("OTLP_TOPIC");
    expect(one(defaults, "NetworkPolicy").spec?.ingress).toHaveLength(1);
    const custom = render(helm, { set: { "otlpHttp.enabled": true, "otlpHttp.topic": "agents.otlp" } });
    expect(configData(custom).OTLP_TOPIC).toBe("agents.otlp");

    const inBridge = helm.template(chart, { set: { "otlpHttp.enabled": true, "otlpBridge.mode": "deployment" } });
    expect(inBridge.status).toBe(1);
    expect(inBridge.stderr).toMatch(/otlpBridge\.mode: inProcess/);
    const noKeys = helm.template(chart, { set: { "otlpHttp.enabled": true, "secretEnv.API_KEYS": "null" } });
    expect(noKeys.status).toBe(1);
    expect(noKeys.stderr).toMatch(/map API_KEYS in secretEnv/);
    const twoTopics = helm.template(chart, { set: { "otlpHttp.enabled": true, "config.OTLP_TOPIC": "other" } });
    expect(twoTopics.status).toBe(1);
    expect(twoTopics.stderr).toMatch(/differ/);
  });

  it("ships the Grafana dashboard as a ConfigMap for Grafana's sidecar, its label configurable, and none when off", () => {
    const dashboard = (manifests: Rendered[]) => byKind(manifests, "ConfigMap").filter(isDashboard);
    const [map] = dashboard(defaults);
    const configMap = models.ConfigMap(structuredClone(must(map, "dashboard ConfigMap")));
    expect(configMap.metadata?.labels?.grafana_dashboard).toBe("1");
    const json = must(configMap.data?.["reflector-dashboard.json"], "dashboard JSON");
    expect(JSON.parse(json)).toEqual(JSON.parse(readFileSync(`${root}ops/grafana/reflector-dashboard.json`, "utf8")));

    const custom = render(helm, {
      set: {
        "grafanaDashboard.labels.grafana_dashboard": null as unknown as string,
        "grafanaDashboard.labels.dashboards": "reflector",
        "grafanaDashboard.annotations.grafana_folder": "Platform",
        "grafanaDashboard.namespace": "monitoring",
      },
    });
    const moved = models.ConfigMap(structuredClone(must(dashboard(custom)[0], "dashboard ConfigMap")));
    expect(moved.metadata?.labels).toMatchObject({ dashboards: "reflector" });
    expect(moved.metadata?.labels).not.toHaveProperty("grafana_dashboard");
    expect(moved.metadata?.annotations).toEqual({ grafana_folder: "Platform" });
    expect(moved.metadata?.namespace).toBe("monitoring");
    expect(dashboard(render(helm, { set: { "grafanaDashboard.enabled": false } }))).toEqual([]);
  });

  it("scales on the lag of every topic the group reads: the input topic and the retry topic", () => {
    const triggers = (manifests: Rendered[]) =>
      one(manifests, "ScaledObject").spec.triggers.map((t): Record<string, string | undefined> => ({ name: t.name, ...t.metadata }));
    expect(triggers(defaults)).toEqual([
      expect.objectContaining({ name: "input", topic: "agent.task.completed", consumerGroup: "reflector" }),
      expect.objectContaining({ name: "retry", topic: "agent.task.completed.retry", consumerGroup: "reflector" }),
    ]);
    // The retry topic is the one config.ts reads: its default, or TOPIC_RETRY.
    const config = loadConfig({ ...configData(defaults), DATABASE_URL: "postgres://r@db/r", REDIS_URL: "redis://c:6379" });
    expect(triggers(defaults).map((t) => t.topic)).toEqual([config.topics.taskCompleted, config.topics.retry]);
    const renamed = render(helm, { set: { "config.TOPIC_RETRY": "reflector.retry", "config.KAFKA_GROUP_ID": "reflector-eu" } });
    expect(triggers(renamed)).toEqual([
      expect.objectContaining({ topic: "agent.task.completed", consumerGroup: "reflector-eu" }),
      expect.objectContaining({ topic: "reflector.retry", consumerGroup: "reflector-eu" }),
    ]);
  });

  it("lets a drain evict unhealthy pods whatever the budget (Kubernetes 1.26 and later)", () => {
    expect(one(defaults, "PodDisruptionBudget").spec?.unhealthyPodEvictionPolicy).toBe("AlwaysAllow");
    const old = render(helm, { kubeVersion: "1.25.0" });
    expect(one(old, "PodDisruptionBudget").spec).not.toHaveProperty("unhealthyPodEvictionPolicy");
    const kept = render(helm, { set: { "podDisruptionBudget.unhealthyPodEvictionPolicy": "" } });
    expect(one(kept, "PodDisruptionBudget").spec).not.toHaveProperty("unhealthyPodEvictionPolicy");
    expect(helm.template(chart, { set: { "podDisruptionBudget.unhealthyPodEvictionPolicy": "Never" } }).status).toBe(1);
  });

  it("probes the bridge's own Deployment on its HTTP port, scrapes it with a PodMonitor and fences it with a NetworkPolicy", () => {
    const bridgeOf = (manifests: Rendered[]) =>
      must(
        byKind(manifests, "Deployment")
          .map((d) => models.Deployment(structuredClone(d)))
          .find((d) => d.metadata?.name?.endsWith("-otlp-bridge")),
        "the bridge's Deployment",
      );
    const separate = render(helm, { set: { "config.OTLP_TOPIC": "otlp_spans", "otlpBridge.mode": "deployment" } });
    const bridge = bridgeOf(separate);
    const container = must(bridge.spec?.template.spec?.containers[0], "bridge container");
    // `reflector otlp-bridge` listens on HTTP_PORT (src/composition/otlp-bridge-app.ts), as the processor does.
    expect(container.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
    expect(container.ports).toEqual(mainContainer(defaults).ports);
    expect(container.startupProbe?.httpGet).toEqual({ path: "/healthz", port: "http" });
    expect(container.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "http" });
    expect(container.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http" });
    expect(container.readinessProbe?.periodSeconds).toBe(mainContainer(defaults).readinessProbe?.periodSeconds);

    const bridgeLabels = must(bridge.spec?.template.metadata?.labels, "bridge pod labels");
    const selectsBridge = (selector: Record<string, string> | undefined) =>
      Object.keys(selector ?? {}).length > 0 && Object.entries(selector ?? {}).every(([k, v]) => bridgeLabels[k] === v);
    const monitor = one(separate, "PodMonitor");
    expect(selectsBridge(monitor.spec.selector.matchLabels)).toBe(true);
    expect(monitor.spec.podMetricsEndpoints?.[0]).toMatchObject({ port: "http", path: "/metrics", interval: "30s" });
    // The processor's ServiceMonitor still scrapes the processor only.
    expect(selectsBridge(one(separate, "ServiceMonitor").spec.selector.matchLabels)).toBe(false);

    const policies = byKind(separate, "NetworkPolicy").map((p) => models.NetworkPolicy(structuredClone(p)));
    expect(policies).toHaveLength(2);
    const fence = must(
      policies.find((p) => selectsBridge(p.spec?.podSelector?.matchLabels)),
      "the bridge's NetworkPolicy",
    );
    expect(fence.spec?.ingress).toEqual([{ ports: [{ port: "http", protocol: "TCP" }], from: [{ podSelector: {} }] }]);
    expect(fence.spec?.policyTypes).toEqual(["Ingress", "Egress"]);

    // No PodMonitor without the bridge's own pods, or with the monitors off.
    expect(byKind(defaults, "PodMonitor")).toEqual([]);
    expect(byKind(render(helm, { set: { "config.OTLP_TOPIC": "otlp_spans" } }), "PodMonitor")).toEqual([]);
    const unmonitored = render(helm, {
      set: { "config.OTLP_TOPIC": "otlp_spans", "otlpBridge.mode": "deployment", "serviceMonitor.enabled": false },
    });
    expect(byKind(unmonitored, "PodMonitor")).toEqual([]);
    expect(readFileSync(`${root}docs/otlp-ingest.md`, "utf8")).toMatch(/`\/healthz`,\s+`\/readyz`\s+and\s+`\/metrics`/);
  });
});
