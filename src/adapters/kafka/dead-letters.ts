import type { Message } from "kafkajs";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import type { FailureCode } from "./failure-policy.js";
import { deadLetterMessage, deferredMessage, retryMessage } from "./failure-records.js";
import { fitsAlone, type SizeLimits } from "./record-size.js";
import type { Done, Work } from "./work.js";

export interface DeadLettersOptions {
  groupId: string;
  retryTopic: string;
  deadLetterTopic: string;
  /** How long a record handed to the retry topic waits there before it is tried again. */
  retryTopicDelayMs: number;
  limits: SizeLimits;
  metrics: Metrics;
  consumerMetrics: ConsumerMetrics;
}

/**
 * The two ends of a record that is not processed: a dead letter, or a copy on the retry topic
 * (a dead letter instead when the copy would be too large for it). Each is what the record
 * commits; it is counted and logged only once that commit is done.
 */
export function createDeadLetters(options: DeadLettersOptions) {
  const { limits, metrics, consumerMetrics } = options;
  const fitsIn = (topic: string) => (message: Message) => fitsAlone(message, topic, limits);
  const context = (code: FailureCode, reason: string) => ({
    groupId: options.groupId,
    code,
    reason,
    now: new Date(),
    retryTopic: options.retryTopic,
  });

  function deadLetter(work: Work, code: FailureCode, reason: string, log: Logger): Done {
    const message = deadLetterMessage(work, context(code, reason), fitsIn(options.deadLetterTopic));
    return {
      messages: [{ topic: options.deadLetterTopic, messages: [message] }],
      afterCommit: () => {
        metrics.deadLetters.inc({ code });
        metrics.events.inc({ result: "dead_lettered" });
        log.warn({ code, reason, valueOmitted: message.value === null }, "event dead-lettered");
      },
    };
  }

  function toRetryTopic(work: Work, code: FailureCode, reason: string, log: Logger): Done {
    const message = retryMessage(
      work,
      context(code, reason),
      Date.now() + options.retryTopicDelayMs,
      fitsIn(options.retryTopic),
    );
    if (!message) {
      return deadLetter(work, code, `${reason} (too large for the retry topic, so not retried)`, log);
    }
    return {
      messages: [{ topic: options.retryTopic, messages: [message] }],
      afterCommit: () => {
        consumerMetrics.retryTopicMessages.inc();
        metrics.events.inc({ result: "retry_topic" });
        log.warn({ code, reason }, "event handed to the retry topic");
      },
    };
  }

  /**
   * Hands an event of a tenant over its share to the retry topic, unprocessed and due at once;
   * null when it would not fit there (it then waits for its tenant's turn where it is).
   */
  function defer(work: Work): Done | null {
    const message = deferredMessage(
      work,
      { groupId: options.groupId, retryTopic: options.retryTopic, now: new Date() },
      fitsIn(options.retryTopic),
    );
    if (!message) return null;
    return {
      messages: [{ topic: options.retryTopic, messages: [message] }],
      afterCommit: () => {
        consumerMetrics.deferredEvents.inc();
      },
    };
  }

  return { deadLetter, toRetryTopic, defer };
}

export type DeadLetters = ReturnType<typeof createDeadLetters>;
