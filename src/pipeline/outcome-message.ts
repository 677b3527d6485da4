import { cloudEventTypes, type ReflectionOutcome, type TaskCompleted } from "../domain/contracts/index.js";
import { stableId } from "../domain/stable-id.js";
import type { OutboundMessage } from "./ports.js";

/** What an outcome says beyond the event it answers. */
export type OutcomeBody = Omit<
  ReflectionOutcome,
  | "schemaVersion"
  | "outcomeId"
  | "sourceEventId"
  | "tenantId"
  | "projectId"
  | "agentId"
  | "loopId"
  | "taskId"
  | "signature"
  | "producedAt"
>;

/** The `reflection.accepted` / `reflection.rejected` message of one event; one id per (tenant, event). */
export function outcomeMessage(
  event: TaskCompleted,
  signature: string,
  body: OutcomeBody,
  now: Date,
): OutboundMessage {
  const outcomeId = stableId("outcome", event.tenantId, event.eventId);
  const value: ReflectionOutcome = {
    schemaVersion: 1,
    outcomeId,
    sourceEventId: event.eventId,
    tenantId: event.tenantId,
    projectId: event.projectId,
    agentId: event.agentId,
    loopId: event.loopId,
    taskId: event.taskId,
    signature,
    producedAt: now.toISOString(),
    ...body,
  };
  return {
    role: body.verdict === "rejected" ? "reflectionRejected" : "reflectionAccepted",
    key: event.loopId,
    id: outcomeId,
    type: cloudEventTypes["reflection-outcome.v1"],
    subject: event.loopId,
    time: value.producedAt,
    value,
  };
}
