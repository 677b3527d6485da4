#!/usr/bin/env bash
# Kafka's own consumer-group tool (what the distribution's bin/kafka-consumer-groups.sh runs), from
# the jars scripts/services.sh fetched into .services/ (it fetches them first when missing).
#
#   scripts/kafka-consumer-groups.sh --bootstrap-server 127.0.0.1:9092 --describe --group reflector
#
# Env: KAFKA_VERSION (3.9.1), as for scripts/services.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kafka_version="${KAFKA_VERSION:-3.9.1}"
kafka_home="$root/.services/kafka-$kafka_version"

if [[ ! -f "$kafka_home/libs/kafka-tools-$kafka_version.jar" ]]; then
  bash "$root/scripts/services.sh" fetch >&2
fi
if [[ ! -f "$kafka_home/log4j-tools.properties" ]]; then
  printf 'log4j.rootLogger=WARN, stderr\nlog4j.appender.stderr=org.apache.log4j.ConsoleAppender\nlog4j.appender.stderr.Target=System.err\nlog4j.appender.stderr.layout=org.apache.log4j.PatternLayout\nlog4j.appender.stderr.layout.ConversionPattern=[%%d] %%p %%m (%%c)%%n\n' \
    >"$kafka_home/log4j-tools.properties"
fi
# Quiet log4j: the tool's table goes to stdout, nothing else.
exec java -cp "$kafka_home/libs/*" -Dlog4j.configuration="file:$kafka_home/log4j-tools.properties" \
  org.apache.kafka.tools.consumer.group.ConsumerGroupCommand "$@"
