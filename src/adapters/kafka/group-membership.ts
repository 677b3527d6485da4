import type { Consumer } from "kafkajs";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";

export interface GroupMembershipOptions {
  logger: Logger;
  metrics: Metrics;
  consumerMetrics: ConsumerMetrics;
  /**
   * How long the consumer may be out of its group (after a rebalance began or it was removed)
   * before it reports itself crashed, so that the process exits and is restarted.
   */
  rejoinDeadlineMs: number;
  /** The consumer is stopping on purpose: leaving the group then is no crash. */
  isStopping: () => boolean;
}

/**
 * The task consumer's membership of its group, from kafkajs' group events: joined (ready, its
 * partitions counted), out of the group (not ready; crashed if not back within the rejoin
 * deadline), or crashed (listeners told once, so that the process exits and is restarted).
 */
export function createGroupMembership(options: GroupMembershipOptions) {
  const { logger, metrics, consumerMetrics, rejoinDeadlineMs, isStopping } = options;
  let joined = false;
  let crashError: unknown = null;
  const crashListeners: ((error: Error) => void)[] = [];
  let outOfGroupTimer: NodeJS.Timeout | null = null;

  function crashed(error: Error): void {
    if (crashError !== null || isStopping()) return;
    crashError = error;
    joined = false;
    metrics.ready.set(0);
    consumerMetrics.assignedPartitions.set(0);
    for (const listener of crashListeners) listener(error);
  }

  /** Out of the group: not ready, and if it does not get back in time, crashed (the process restarts). */
  function leftGroup(why: string): void {
    joined = false;
    metrics.ready.set(0);
    consumerMetrics.assignedPartitions.set(0);
    if (outOfGroupTimer || isStopping()) return;
    outOfGroupTimer = setTimeout(() => {
      outOfGroupTimer = null;
      if (joined || isStopping()) return;
      logger.error({ why, rejoinDeadlineMs }, "consumer not back in its group in time; giving up");
      crashed(
        new Error(
          `the consumer has not been a member of its group for ${String(rejoinDeadlineMs)} ms (${why})`,
        ),
      );
    }, rejoinDeadlineMs);
    outOfGroupTimer.unref();
  }

  function rejoined(partitions: number): void {
    joined = true;
    if (outOfGroupTimer) clearTimeout(outOfGroupTimer);
    outOfGroupTimer = null;
    metrics.ready.set(1);
    consumerMetrics.assignedPartitions.set(partitions);
  }

  return {
    /** Follows the consumer's group events. */
    watch(consumer: Consumer): void {
      consumer.on(consumer.events.GROUP_JOIN, (event) => {
        const assignment = event.payload.memberAssignment;
        const partitions = Object.values(assignment).reduce((n, list) => n + list.length, 0);
        rejoined(partitions);
        logger.info({ assignment }, "joined the consumer group");
      });
      consumer.on(consumer.events.REBALANCING, () => {
        leftGroup("rebalancing");
      });
      consumer.on(consumer.events.STOP, () => {
        leftGroup("stopped");
      });
      consumer.on(consumer.events.CRASH, (event) => {
        crashed(event.payload.error);
      });
    },

    isJoined: () => joined,
    hasCrashed: () => crashError !== null,

    /** Leaving on purpose: not ready, and no rejoin deadline runs. */
    leave(): void {
      joined = false;
      if (outOfGroupTimer) clearTimeout(outOfGroupTimer);
      metrics.ready.set(0);
    },

    onCrash(listener: (error: Error) => void): void {
      crashListeners.push(listener);
    },
  };
}

export type GroupMembership = ReturnType<typeof createGroupMembership>;
