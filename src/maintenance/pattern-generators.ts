import type { TaskCompleted } from "../domain/contracts/index.js";
import type { DreamGroup } from "../domain/maintenance/dream-groups.js";
import { synthesizePatternLesson } from "../domain/maintenance/pattern-lesson.js";
import { stableId } from "../domain/stable-id.js";
import type { ReflectionGenerator } from "../pipeline/ports.js";
import type { PatternGenerator } from "./maintenance-ports.js";

/** Offline: the common ground of the group's stored lessons, labelled `heuristic`. */
export function createHeuristicPatternGenerator(): PatternGenerator {
  return {
    name: "heuristic",
    generate: (group) => Promise.resolve(synthesizePatternLesson(group)),
  };
}

/**
 * Dreaming with the configured generator: the group's lessons are shown to it as one
 * exploratory (`partial`) task, each source lesson becomes a trace event of a synthetic task, so
 * the model sees them as data (inside the generator's own injection-safe data blocks), not as
 * instructions.
 */
export function createLlmPatternGenerator(generator: ReflectionGenerator): PatternGenerator {
  return {
    name: generator.name,
    generate: async (group, attempt, violations, missingFields) => {
      const reflection = await generator.generate({
        event: patternTask(group),
        attempt,
        violations,
        missingFields,
        insights: [],
        answerEvaluation: null,
      });
      // A pattern lesson spans many traces: a step of the synthetic one is no attribution.
      const { attribution: _attribution, ...lesson } = reflection;
      return lesson;
    },
  };
}

export function patternTask(group: DreamGroup): TaskCompleted {
  const at = new Date(0).toISOString();
  const first = group.sources[0];
  return {
    schemaVersion: 1,
    eventId: stableId("dream", group.key, ...group.sources.map((s) => s.id)),
    tenantId: "dreaming",
    projectId: first?.projectId ?? "default",
    agentId: "reflector-dreaming",
    taskId: `dream:${group.key}`,
    loopId: `dream:${group.key}`,
    occurredAt: at,
    task: {
      description: `Analyzing patterns in ${String(group.sources.length)} high-importance reflections on ${group.label}`,
      goal: "One pattern-level lesson that prevents this whole family of failures, with executable adjustments",
    },
    outcome: "partial",
    events: group.sources.map((s, i) => ({
      eventId: `m${String(i + 1)}`,
      type: "system_event" as const,
      timestamp: at,
      content: [
        `lesson (${String(s.occurrences)} occurrences): ${s.reflection.reflectionText}`,
        `learning: ${s.reflection.learning}`,
        `adjustments: ${s.reflection.adjustments.join("; ")}`,
        `patterns: ${s.reflection.patterns.join("; ")}`,
      ].join("\n"),
    })),
  };
}
