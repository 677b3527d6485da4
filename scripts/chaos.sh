#!/usr/bin/env bash
# Chaos run: kill -9 the processor repeatedly, stop/restart a private Redis and Postgres, fuzzed
# inputs; prints the accounting and exits non-zero if any event is lost or duplicated.
# Bounded (CHAOS_DEADLINE_MS, default 300 s after production ends). Not part of `npm test`.
# `--llm-faults`: the openai generator against a fake LLM server with a fault schedule (bench/chaos-llm-faults.ts).
# Needs: Kafka on KAFKA_BROKERS (default 127.0.0.1:9092), redis-server, /usr/lib/postgresql/*/bin, root (runuser).
set -euo pipefail
cd "$(dirname "$0")/.."
exec timeout "${CHAOS_TIMEOUT_S:-900}" npx tsx bench/chaos.ts "$@"
