import type { Redis } from "ioredis";
import { errorMessage, ReflectorError } from "../../domain/errors.js";
import {
  createMemoryNewTraceLimit,
  createMemoryVolumeLimit,
  type NewTraceLimit,
  type TenantVolumeLimit,
} from "../../pipeline/tenant-limits.js";
import type { NewLessonLimit } from "../../pipeline/ports.js";

/**
 * Per-tenant volume limits counted in Redis, so every pod adds to the same count: a limit of
 * 200,000 spans a minute is 200,000 for the whole Deployment, not per replica. Each is a fixed
 * window of a minute per tenant (the first count of a window sets its expiry); a refused amount
 * is not counted. A fixed window lets a tenant send up to twice the limit across a window's edge,
 * never more.
 */

const windowMs = 60_000;

/**
 * KEYS[1] the window's count; ARGV: limit, window ms, amount. Refused (the window's remaining ms)
 * when the amount would take the count past the limit, except into an empty window: a single
 * amount larger than the whole limit passes once a window starts, as a bucket's would.
 */
const takeScript = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[3])
if used > 0 and used + amount > tonumber(ARGV[1]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = tonumber(ARGV[2]) end
  return ttl
end
redis.call('INCRBY', KEYS[1], amount)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return -1
`;

/**
 * KEYS[1] the window's count of new traces. ARGV: limit, window ms, how long a trace id is
 * remembered (ms), the prefix of its marker, all-or-nothing (1) or as many as fit (0), then the
 * trace ids (distinct). A trace id is new when no marker of it is remembered. Answers the window's
 * remaining ms (-1 when nothing was refused) followed by the refused ids; the admitted new ids
 * are marked and counted in the same script, so two pods never admit the same room twice.
 */
const newTracesScript = `
local limit = tonumber(ARGV[1])
local fresh = {}
for i = 6, #ARGV do
  if redis.call('EXISTS', ARGV[4] .. ARGV[i]) == 0 then fresh[#fresh + 1] = ARGV[i] end
end
if #fresh == 0 then return {-1} end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local room = limit - used
if room < 0 then room = 0 end
if ARGV[5] == '1' and #fresh > room then room = 0 end
local admitted = math.min(room, #fresh)
if admitted > 0 then
  redis.call('INCRBY', KEYS[1], admitted)
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
  for i = 1, admitted do redis.call('SET', ARGV[4] .. fresh[i], '1', 'PX', ARGV[3]) end
end
if admitted == #fresh then return {-1} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = tonumber(ARGV[2]) end
local answer = {ttl}
for i = admitted + 1, #fresh do answer[#answer + 1] = fresh[i] end
return answer
`;

interface VolumeCommands {
  reflectorVolumeTake(key: string, limit: number, windowMs: number, amount: number): Promise<number>;
  reflectorNewTraces(key: string, ...args: (string | number)[]): Promise<(string | number)[]>;
}

function commandsOf(redis: Redis): Redis & VolumeCommands {
  if (!("reflectorVolumeTake" in redis)) {
    redis.defineCommand("reflectorVolumeTake", { numberOfKeys: 1, lua: takeScript });
    redis.defineCommand("reflectorNewTraces", { numberOfKeys: 1, lua: newTracesScript });
  }
  return redis as Redis & VolumeCommands;
}

/** Redis away: the caller's request waits (a 503, a retried batch), like any other Redis outage. */
function unavailable(name: string, err: unknown): ReflectorError {
  return new ReflectorError("INDEX_UNAVAILABLE", `the ${name} limit is unreadable: ${errorMessage(err)}`, {
    cause: err,
  });
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Tenant ids as key parts: any text, never another key's (encoded, so `:` cannot split them). */
const keyPart = (tenantId: string) => encodeURIComponent(tenantId);

/** `perMinute` of something (spans, new lessons) per tenant a minute, counted across pods. */
export function createRedisVolumeLimit(
  redis: Redis,
  options: { keyPrefix: string; name: string; perMinute: number },
): TenantVolumeLimit {
  const commands = commandsOf(redis);
  return {
    perMinute: options.perMinute,
    async take(tenantId, amount = 1) {
      if (amount <= 0) return null;
      const key = `${options.keyPrefix}:limit:${options.name}:${keyPart(tenantId)}`;
      let ttl: number;
      try {
        ttl = await commands.reflectorVolumeTake(key, options.perMinute, windowMs, amount);
      } catch (err) {
        throw unavailable(options.name, err);
      }
      return ttl < 0 ? null : seconds(ttl);
    },
  };
}

/**
 * New trace ids per tenant a minute, counted across pods and across OTLP/HTTP and the bridge (a
 * trace admitted by one is not new to the other). A trace id is remembered for `rememberMs` (the
 * longest a trace stays open, OTLP_TRACE_TIMEOUT_MS), so its later spans are never new again.
 */
export function createRedisNewTraceLimit(
  redis: Redis,
  options: { keyPrefix: string; perMinute: number; rememberMs: number },
): NewTraceLimit {
  const commands = commandsOf(redis);
  return {
    perMinute: options.perMinute,
    async admit(tenantId, traceIds, mode) {
      const distinct = [...new Set(traceIds)];
      if (distinct.length === 0) return { refused: [], retryAfterSeconds: null };
      const tenant = keyPart(tenantId);
      let answer: (string | number)[];
      try {
        answer = await commands.reflectorNewTraces(
          `${options.keyPrefix}:limit:new-traces:${tenant}`,
          options.perMinute,
          windowMs,
          options.rememberMs,
          `${options.keyPrefix}:trace-seen:${tenant}:`,
          mode === "all" ? "1" : "0",
          ...distinct,
        );
      } catch (err) {
        throw unavailable("new traces", err);
      }
      const ttl = Number(answer[0]);
      if (ttl < 0) return { refused: [], retryAfterSeconds: null };
      return { refused: answer.slice(1).map(String), retryAfterSeconds: seconds(ttl) };
    },
  };
}

/** What OTLP ingest counts per tenant a minute. */
export interface OtlpTenantLimits {
  spans: TenantVolumeLimit;
  newTraces: NewTraceLimit;
}

/** The limits counted in Redis, shared by every pod (and by OTLP/HTTP and the bridge); else in memory. */
export function otlpTenantLimits(
  config: {
    otlp: { http: { spansPerMinute: number }; newTracesPerMinute: number; timeoutMs: number };
    redis: { keyPrefix: string };
  },
  redis?: Redis,
  now?: () => number,
): OtlpTenantLimits {
  const o = config.otlp;
  const rememberMs = Math.max(o.timeoutMs, 3_600_000);
  if (redis) {
    const keyPrefix = config.redis.keyPrefix;
    return {
      spans: createRedisVolumeLimit(redis, {
        keyPrefix,
        name: "otlp-spans",
        perMinute: o.http.spansPerMinute,
      }),
      newTraces: createRedisNewTraceLimit(redis, { keyPrefix, perMinute: o.newTracesPerMinute, rememberMs }),
    };
  }
  return {
    spans: createMemoryVolumeLimit({ perMinute: o.http.spansPerMinute, ...(now ? { now } : {}) }),
    newTraces: createMemoryNewTraceLimit({
      perMinute: o.newTracesPerMinute,
      rememberMs,
      ...(now ? { now } : {}),
    }),
  };
}

/**
 * LESSONS_NEW_PER_MINUTE as the pipeline asks it (`src/pipeline/stages/new-lesson-limit.ts`),
 * counted in Redis across every pod; undefined when it is off.
 */
export function redisNewLessonLimit(
  redis: Redis,
  settings: { keyPrefix: string; perMinute: number | null },
  refused?: (tenantId: string) => void,
): NewLessonLimit | undefined {
  if (settings.perMinute === null) return undefined;
  const limit = createRedisVolumeLimit(redis, {
    keyPrefix: settings.keyPrefix,
    name: "new-lessons",
    perMinute: settings.perMinute,
  });
  return { limit, ...(refused ? { refused } : {}) };
}
