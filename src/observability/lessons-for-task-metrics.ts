import { Counter, type Registry } from "prom-client";

/**
 * `reflector_lessons_for_task_total{checked_by}`: answers of "lessons for a task" by what chose
 * the lessons, `model` (the model's check) or `meaning`. With `LESSONS_FOR_TASK_CHECK=model`, a
 * rising `meaning` share is the model failing, timing out or over budget: the agents still get
 * lessons, chosen by meaning alone.
 */
export function countLessonsForTask<Body, Answer extends { checkedBy: "model" | "meaning" }>(
  service: { forTask(tenantId: string, body: Body): Promise<Answer> },
  registry: Registry,
): { forTask(tenantId: string, body: Body): Promise<Answer> } {
  const answers = new Counter({
    name: "reflector_lessons_for_task_total",
    help: "Answers of lessons for a task, by what chose the lessons: the model's check (model) or meaning alone (meaning).",
    labelNames: ["checked_by"] as const,
    registers: [registry],
  });
  return {
    async forTask(tenantId, body) {
      const answer = await service.forTask(tenantId, body);
      answers.inc({ checked_by: answer.checkedBy });
      return answer;
    },
  };
}
