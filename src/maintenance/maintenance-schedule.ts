import type { Logger } from "../observability/logger.js";
import type { ExclusiveRunner } from "./maintenance-ports.js";

export interface ScheduledJob {
  name: string;
  /** 0 = not scheduled. */
  intervalMs: number;
  run(): Promise<unknown>;
}

/**
 * Runs maintenance jobs inside the processor every `intervalMs`, each under an advisory lock so
 * that of N replicas only one runs a job at a time (the others skip that round). A failing run
 * is logged and retried at the next interval; it never touches the stream processing.
 */
export function createMaintenanceSchedule(deps: {
  jobs: ScheduledJob[];
  exclusive: ExclusiveRunner;
  logger: Logger;
}) {
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  let stopped = true;

  const schedule = (job: ScheduledJob) => {
    const timer = setTimeout(() => {
      const round = (async () => {
        try {
          const result = await deps.exclusive(job.name, () => job.run());
          if (result.ran)
            deps.logger.info({ job: job.name, result: result.value }, "maintenance job finished");
          else
            deps.logger.debug({ job: job.name }, "maintenance job skipped: another replica holds its lock");
        } catch (err) {
          deps.logger.warn({ err, job: job.name }, "maintenance job failed; retrying at the next interval");
        }
      })();
      running.add(round);
      void round.finally(() => {
        running.delete(round);
        if (!stopped) schedule(job);
      });
    }, job.intervalMs);
    timer.unref();
    timers.set(job.name, timer);
  };

  return {
    /** Names of the jobs that will run. */
    start(): string[] {
      stopped = false;
      const active = deps.jobs.filter((j) => j.intervalMs > 0);
      for (const job of active) schedule(job);
      return active.map((j) => j.name);
    },
    /** Stops scheduling and waits for a run in progress to finish. */
    async stop(): Promise<void> {
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
}

export type MaintenanceSchedule = ReturnType<typeof createMaintenanceSchedule>;
