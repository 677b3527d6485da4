import { describe, expect, it } from "vitest";
import {
  bindingViolation,
  parseTenantTopicBinding,
  tenantOfTopic,
} from "../../../src/domain/tenant-topic-binding.js";

describe("tenant topic binding", () => {
  const binding = parseTenantTopicBinding("acme=agents.acme.*,globex=agents.globex.tasks,acme=legacy.acme");

  it("finds the tenant of an exact topic, of a topic under a prefix, and none elsewhere", () => {
    expect(tenantOfTopic(binding, "agents.acme.tasks")).toBe("acme");
    expect(tenantOfTopic(binding, "agents.acme.")).toBe("acme");
    expect(tenantOfTopic(binding, "legacy.acme")).toBe("acme");
    expect(tenantOfTopic(binding, "agents.globex.tasks")).toBe("globex");
    expect(tenantOfTopic(binding, "agents.globex.tasks.v2")).toBeNull();
    expect(tenantOfTopic(binding, "agents.acmex.tasks")).toBeNull();
  });

  it("says why an event may not be processed, naming the tenant, the topic and its tenant", () => {
    expect(bindingViolation(binding, "agents.acme.tasks", "acme")).toBeNull();
    expect(bindingViolation(binding, "agents.acme.tasks", "globex")).toBe(
      'tenantId "globex" arrived on topic agents.acme.tasks, which is bound to tenant "acme"',
    );
    expect(bindingViolation(binding, "other", "acme")).toBe(
      "topic other is bound to no tenant (TENANT_TOPIC_BINDING)",
    );
  });

  it("lets one tenant have overlapping bindings, but never two tenants one topic", () => {
    expect(() => parseTenantTopicBinding("a=t.*,a=t.x")).not.toThrow();
    expect(() => parseTenantTopicBinding("a=t.x,b=t.x")).toThrow(/can both match one topic/);
    expect(() => parseTenantTopicBinding("a=t.*,b=t.x.*")).toThrow(/can both match one topic/);
  });

  it("refuses entries without a tenant or topic, and topic names Kafka would refuse", () => {
    expect(() => parseTenantTopicBinding("=t")).toThrow(/not tenant=topic/);
    expect(() => parseTenantTopicBinding("a=")).toThrow(/not tenant=topic/);
    expect(() => parseTenantTopicBinding("a=t*x")).toThrow(/letters, digits/);
    expect(() => parseTenantTopicBinding("a=*")).toThrow(/letters, digits/);
  });
});
