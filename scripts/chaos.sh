#!/usr/bin/env bash
# Chaos run: kill -9 the processor repeatedly, stop/restart a private Redis and Postgres, fuzzed
# inputs; prints the accounting and exits non-zero if any event is lost or duplicated.
# Bounded (CHAOS_DEADLINE_MS, default 300 s after production ends). Not part of `npm test`.
# `--llm-faults`: the openai generator against a fake LLM server with a fault schedule (bench/chaos-llm-faults.ts).
# `--otlp`: the OTLP bridge and `dlq replay` under a tenant binding, fed valid and hostile records
# (bench/chaos-otlp.ts); its accounting counts lost, duplicated and crossed-tenant traces.
# Needs: Kafka on KAFKA_BROKERS (default 127.0.0.1:9092), redis-server, /usr/lib/postgresql/*/bin, root (runuser).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--otlp" ]]; then
  exec timeout "${CHAOS_TIMEOUT_S:-900}" npx tsx bench/chaos-otlp.ts
fi
exec timeout "${CHAOS_TIMEOUT_S:-900}" npx tsx bench/chaos.ts "$@"
