import type { GuardrailConfig } from "../../domain/guardrails/guardrail-config.js";
import type { LoopCompleter } from "../../pipeline/complete-loop.js";
import {
  answers,
  bearer,
  notFoundForTenant,
  type ApiContext,
  type ApiScope,
  type RouteRoles,
} from "../api-context.js";
import { GuardrailsStatusAnswer, LoopCompleteAnswer, OverrideAnswer } from "./loop-answers.js";
import { guardrailsStatusJson, loopCompleteJson, orchestratorPersonaOf, overrideJson } from "./loop-json.js";
import { LoopCompleteBody, LoopIdParams, OverrideBody } from "./loop-schemas.js";
import type { LoopStore } from "./loop-store.js";

export interface LoopRoutesDeps {
  store: LoopStore;
  completeLoop: LoopCompleter;
  /** The thresholds the decisions were made with, shown beside each guardrail's value. */
  guardrails: GuardrailConfig;
}

export const loopRouteRoles: RouteRoles = {
  "POST /orchestrator/loop-complete": "decide",
  "GET /orchestrator/guardrails-status/:loopId": "read",
  "POST /orchestrator/override-guardrails/:loopId": "override",
};

/** The orchestrator endpoints: report a loop's end, read its guardrails, override them. */
export function registerLoopRoutes(scope: ApiScope, deps: LoopRoutesDeps, ctx: ApiContext): void {
  scope.post(
    "/orchestrator/loop-complete",
    {
      schema: {
        summary: "Decide a finished loop: finalize, rerun or halt (docs/specification.md#loop-guardrails)",
        operationId: "completeLoop",
        tags: ["loops"],
        security: bearer,
        body: LoopCompleteBody,
        response: answers({ 200: LoopCompleteAnswer }, {}, { body: true }),
      },
    },
    async (request) => {
      const tenantId = ctx.tenantOf(request);
      const body = request.body;
      if (body.override_fatigue || body.override_max_reruns) {
        ctx.requireRole(request, "override");
        await deps.store.setOverride(tenantId, body.loop_id, {
          overrideFatigue: body.override_fatigue,
          overrideMaxReruns: body.override_max_reruns,
          overriddenBy: body.override_by,
          overrideReason: null,
        });
      }
      const { decision, committed } = await deps.completeLoop({
        tenantId,
        projectId: body.project_id,
        loopId: body.loop_id,
        rerunOf: body.rerun_of,
        outcome: body.outcome ?? "success",
        alignment: body.alignment_score,
        drift: body.drift_score,
        biasTags: body.bias_tags,
        orchestratorPersona: orchestratorPersonaOf(body) ?? undefined,
        reflectionPersona: body.reflection_persona,
        taskDescription: body.task,
      });
      return loopCompleteJson(body, decision, committed, deps.guardrails);
    },
  );

  scope.get(
    "/orchestrator/guardrails-status/:loopId",
    {
      schema: {
        summary: "A loop's last decision and any pending override",
        operationId: "getGuardrailsStatus",
        tags: ["loops"],
        security: bearer,
        params: LoopIdParams,
        response: answers({ 200: GuardrailsStatusAnswer }, { 404: notFoundForTenant }),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const { loopId } = request.params;
      const [trace, override] = await Promise.all([
        deps.store.guardrailsStatus(tenantId, loopId),
        deps.store.findOverride(tenantId, loopId),
      ]);
      if (!trace && !override) {
        return reply.code(404).send({ error: "not_found", message: `no loop ${loopId} for this tenant` });
      }
      return guardrailsStatusJson(loopId, trace, override, deps.guardrails);
    },
  );

  scope.post(
    "/orchestrator/override-guardrails/:loopId",
    {
      schema: {
        summary: "Override fatigue or the rerun limit for the next decision about a loop",
        operationId: "overrideGuardrails",
        tags: ["loops"],
        security: bearer,
        params: LoopIdParams,
        body: OverrideBody,
        response: answers({ 200: OverrideAnswer }, {}, { body: true }),
      },
    },
    async (request) => {
      const tenantId = ctx.tenantOf(request);
      const { loopId } = request.params;
      const body = request.body;
      const stored = await deps.store.setOverride(tenantId, loopId, {
        overrideFatigue: body.override_fatigue,
        overrideMaxReruns: body.override_max_reruns,
        overriddenBy: body.override_by,
        overrideReason: body.override_reason,
      });
      return overrideJson(stored);
    },
  );
}
