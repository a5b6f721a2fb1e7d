#!/usr/bin/env bash
# A single-node Apache Kafka (KRaft, combined broker+controller) for local
# tests, run from jars that Maven resolves (tools/kafka/pom.xml) into the
# per-user cache. Besides PLAINTEXT (also the inter-broker listener) it
# serves two secure listeners for the security tests, with certificates from
# agent/cmd/testcerts (a throw-away CA, made at each `up`):
#   SASL_SSL on KAFKA_PORT+2: SCRAM-SHA-512 (user KAFKA_SCRAM_USER), PLAIN
#            (user KAFKA_PLAIN_USER) and OAUTHBEARER, whose tokens Kafka's
#            unsecured-JWS validator checks (alg "none", a sub and an exp
#            claim), as Kafka's own tests do
#   SSL      on KAFKA_PORT+3 with ssl.client.auth=required (mTLS)
#
#   tools/kafka.sh up       start (idempotent), wait until it serves metadata,
#                           print the bootstrap address on stdout
#   tools/kafka.sh down     stop it (TERM, then KILL), remove its data
#   tools/kafka.sh status   print the bootstrap address if up, else exit 1
#   tools/kafka.sh pid      print the broker's process id if it runs, else
#                           exit 1 (make bench reads its CPU time)
#   tools/kafka.sh security print the secure listeners' client settings as
#                           `export NAME=VALUE` lines (see below):
#                           eval "$(tools/kafka.sh security)"
#   tools/kafka.sh topics ARGS...
#                           org.apache.kafka.tools.TopicCommand against it, e.g.
#                           topics --create --topic t --partitions 8
#   tools/kafka.sh groups ARGS...
#                           kafka-consumer-groups.sh against it, e.g.
#                           groups --describe --group g
#   tools/kafka.sh jars     fetch the jars only; print their directory
#   tools/kafka.sh logs     print the path of the broker log; the request
#                           log of clients whose client.id starts with
#                           tributary-e2e- is request.log next to it
#
# The settings `security` prints (files are PEM unless said otherwise):
#   KAFKA_SASL_SSL_BOOTSTRAP   127.0.0.1:KAFKA_PORT+2
#   KAFKA_MTLS_BOOTSTRAP       127.0.0.1:KAFKA_PORT+3
#   KAFKA_CA_FILE              the CA that signed the broker's certificate
#   KAFKA_CLIENT_CERT_FILE, KAFKA_CLIENT_KEY_FILE
#                              a client certificate and key the mTLS listener accepts
#   KAFKA_CLIENT_P12_FILE, KAFKA_CLIENT_P12_PASSWORD
#                              the same as a PKCS#12 store and its password
#   KAFKA_EXPIRED_CERT_FILE, KAFKA_EXPIRED_KEY_FILE
#                              a client certificate of the same CA that has expired
#   KAFKA_OTHER_CA_FILE        an unrelated CA (the broker's certificate does not chain to it)
#   KAFKA_SCRAM_USER, KAFKA_SCRAM_PASSWORD   the SCRAM-SHA-512 user
#   KAFKA_PLAIN_USER, KAFKA_PLAIN_PASSWORD   the PLAIN user
#
# Environment:
#   KAFKA_PORT             PLAINTEXT listener on 127.0.0.1 (default 19092)
#   KAFKA_CONTROLLER_PORT  KRaft controller listener (default KAFKA_PORT+1)
#   KAFKA_SASL_SSL_PORT    SASL_SSL listener (default KAFKA_PORT+2)
#   KAFKA_MTLS_PORT        SSL listener with client certificates (default KAFKA_PORT+3)
#   KAFKA_STATE_DIR        pid, config, certificates, logs and data
#                          (default ${TMPDIR:-/tmp}/tributary-kafka-$KAFKA_PORT)
#   TRIBUTARY_CERTS_DIR    take the certificates from (or make them in) this
#                          directory instead of $KAFKA_STATE_DIR/certs, e.g. to
#                          share one CA with tools/registry.sh
#   KAFKA_HEAP_OPTS        JVM heap (default -Xms256m -Xmx512m)
#   KAFKA_START_TIMEOUT    seconds to wait for the broker (default 90)
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_VERSION=4.4.0
KAFKA_PORT="${KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-$((KAFKA_PORT + 1))}"
KAFKA_SASL_SSL_PORT="${KAFKA_SASL_SSL_PORT:-$((KAFKA_PORT + 2))}"
KAFKA_MTLS_PORT="${KAFKA_MTLS_PORT:-$((KAFKA_PORT + 3))}"
KAFKA_STATE_DIR="${KAFKA_STATE_DIR:-${TMPDIR:-/tmp}/tributary-kafka-$KAFKA_PORT}"
# Where `up` makes the certificates; CERTS_DIR is where those of a running
# server are.
NEW_CERTS_DIR="${TRIBUTARY_CERTS_DIR:-$KAFKA_STATE_DIR/certs}"
CERTS_DIR="$(certs_dir "$KAFKA_STATE_DIR" "$NEW_CERTS_DIR")"
# Test users; nothing here protects anything.
SCRAM_USER=ingest SCRAM_PASSWORD=tributary-scram-secret
PLAIN_USER=plainingest PLAIN_PASSWORD=tributary-plain-secret
P12_PASSWORD=tributary-p12-secret
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
export KAFKA_PORT KAFKA_CONTROLLER_PORT
BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
POM="$TRIBUTARY_REPO/tools/kafka/pom.xml"
PIDFILE="$KAFKA_STATE_DIR/kafka.pid"

# The cache key includes a hash of the pom so editing it refetches.
jars_key() { echo "kafka-$KAFKA_VERSION-$(sha256sum <"$POM" | cut -c1-8)"; }

fetch_jars() { # DIR
  command -v mvn >/dev/null || { echo "mvn not found"; return 1; }
  mvn -B -q -f "$POM" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DoutputDirectory="$1/jars"
  ls "$1/jars"
  [[ -f "$1/jars/kafka_2.13-$KAFKA_VERSION.jar" ]]
}

jars_dir() {
  local key; key="$(jars_key)"
  cache_build "$key" fetch_jars
  echo "$TRIBUTARY_CACHE/$key/jars"
}

# Quiet config for command-line tools: warnings to stderr only.
tools_log4j() {
  local f="$TRIBUTARY_CACHE/.kafka-tools-log4j2.properties"
  [[ -f "$f" ]] || cat >"$f" <<'L4J'
status = error
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
L4J
  echo "$f"
}

# run_class MAIN ARGS...: a Kafka CLI class with a small, fast-starting JVM.
# Set EXEC=1 to replace this shell with it.
run_class() {
  local jars; jars="$(jars_dir)"
  ${EXEC:+exec} java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$(tools_log4j)" -cp "$jars/*" "$@"
}

pid_alive() { server_alive "$PIDFILE" "$KAFKA_STATE_DIR/server.properties"; }

# The broker answers a metadata request (lists topics).
probe() { timeout 30 "${BASH_SOURCE[0]}" topics --list >/dev/null 2>&1; }

write_config() {
  mkdir -p "$KAFKA_STATE_DIR/data" "$KAFKA_STATE_DIR/logs"
  cat >"$KAFKA_STATE_DIR/server.properties" <<CFG
# generated by tools/kafka.sh
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT,SSL://127.0.0.1:$KAFKA_MTLS_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT,SSL://127.0.0.1:$KAFKA_MTLS_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL
ssl.keystore.type=PEM
ssl.keystore.location=$CERTS_DIR/server-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$CERTS_DIR/ca.pem
listener.name.ssl.ssl.client.auth=required
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN,OAUTHBEARER
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$PLAIN_USER="$PLAIN_PASSWORD";
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler
log.dirs=$KAFKA_STATE_DIR/data
num.partitions=4
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Retention runs every second (default 5 minutes), so that a test of
# records deleted by retention (retention.bytes on a topic) waits little.
log.retention.check.interval.ms=1000
num.network.threads=2
num.io.threads=4
CFG
  cat >"$KAFKA_STATE_DIR/log4j2.properties" <<L4J
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $KAFKA_STATE_DIR/logs/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.state.name = state.change.logger
logger.state.level = WARN
# The requests of clients whose client.id starts with tributary-e2e- go to
# logs/request.log, for the tests of client properties (client.id, fetch
# settings) to read; no other request is logged.
appender.request.type = File
appender.request.name = REQUEST
appender.request.fileName = $KAFKA_STATE_DIR/logs/request.log
appender.request.layout.type = PatternLayout
appender.request.layout.pattern = [%d] %m%n
appender.request.filter.client.type = RegexFilter
appender.request.filter.client.regex = .*"clientId":"tributary-e2e-.*
appender.request.filter.client.onMatch = ACCEPT
appender.request.filter.client.onMismatch = DENY
logger.request.name = kafka.request.logger
logger.request.level = DEBUG
logger.request.additivity = false
logger.request.appenderRef.request.ref = REQUEST
L4J
}

# 16 random bytes, base64url without padding: a Kafka cluster id. It is
# passed as --cluster-id=<id>, since an id that starts with "-" would be
# read as an option after -t.
random_cluster_id() { head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'; }

cmd_up() {
  if pid_alive; then
    if probe; then echo "$BOOTSTRAP"; return 0; fi
    log "broker pid $(cat "$PIDFILE") is running but not answering; restarting"
    cmd_down
  fi
  local p
  for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" "$KAFKA_SASL_SSL_PORT" "$KAFKA_MTLS_PORT"; do
    port_open "$p" && die "port $p is in use by another process"
  done
  local jars; jars="$(jars_dir)"
  rm -rf "$KAFKA_STATE_DIR"
  CERTS_DIR="$NEW_CERTS_DIR"
  make_test_certs "$CERTS_DIR" "$P12_PASSWORD"
  write_config
  record_certs_dir "$KAFKA_STATE_DIR" "$CERTS_DIR"
  run_class kafka.tools.StorageTool format --ignore-formatted \
    --cluster-id="$(random_cluster_id)" -c "$KAFKA_STATE_DIR/server.properties" \
    --add-scram "SCRAM-SHA-512=[name=$SCRAM_USER,password=$SCRAM_PASSWORD]" \
    >"$KAFKA_STATE_DIR/logs/format.log" 2>&1 ||
    { cat "$KAFKA_STATE_DIR/logs/format.log" >&2; die "storage format failed"; }

  # setsid: own session and process group (pgid = pid), so `down` can kill
  # the whole group and the broker does not get the caller's signals.
  # shellcheck disable=SC2086
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PIDFILE" \
    java $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$KAFKA_STATE_DIR/log4j2.properties" \
    -Dkafka.logs.dir="$KAFKA_STATE_DIR/logs" \
    -cp "$jars/*" kafka.Kafka "$KAFKA_STATE_DIR/server.properties" \
    </dev/null >"$KAFKA_STATE_DIR/logs/kafka.out" 2>&1 &
  local deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  while [[ ! -s "$PIDFILE" ]]; do sleep 0.1; done
  until port_open "$KAFKA_PORT"; do
    if ! pid_alive; then
      tail -n 40 "$KAFKA_STATE_DIR/logs/kafka.out" "$KAFKA_STATE_DIR/logs/server.log" >&2 || true
      die "broker exited during startup"
    fi
    (( SECONDS < deadline )) || { cmd_down; die "broker did not open port $KAFKA_PORT in ${KAFKA_START_TIMEOUT}s"; }
    sleep 0.3
  done
  until probe && port_open "$KAFKA_SASL_SSL_PORT" && port_open "$KAFKA_MTLS_PORT"; do
    pid_alive || die "broker exited during startup (see $KAFKA_STATE_DIR/logs)"
    (( SECONDS < deadline )) || { cmd_down; die "broker did not answer metadata in ${KAFKA_START_TIMEOUT}s"; }
    sleep 1
  done
  log "kafka $KAFKA_VERSION up (pid $(cat "$PIDFILE"), logs $KAFKA_STATE_DIR/logs)"
  echo "$BOOTSTRAP"
}

cmd_security() {
  cmd_status >/dev/null || die "kafka is not up (tools/kafka.sh up)"
  cat <<ENV
export KAFKA_SASL_SSL_BOOTSTRAP=127.0.0.1:$KAFKA_SASL_SSL_PORT
export KAFKA_MTLS_BOOTSTRAP=127.0.0.1:$KAFKA_MTLS_PORT
export KAFKA_CA_FILE=$CERTS_DIR/ca.pem
export KAFKA_CLIENT_CERT_FILE=$CERTS_DIR/client.pem
export KAFKA_CLIENT_KEY_FILE=$CERTS_DIR/client-key.pem
export KAFKA_CLIENT_P12_FILE=$CERTS_DIR/client.p12
export KAFKA_CLIENT_P12_PASSWORD=$P12_PASSWORD
export KAFKA_EXPIRED_CERT_FILE=$CERTS_DIR/expired.pem
export KAFKA_EXPIRED_KEY_FILE=$CERTS_DIR/expired-key.pem
export KAFKA_OTHER_CA_FILE=$CERTS_DIR/ca-other.pem
export KAFKA_SCRAM_USER=$SCRAM_USER
export KAFKA_SCRAM_PASSWORD=$SCRAM_PASSWORD
export KAFKA_PLAIN_USER=$PLAIN_USER
export KAFKA_PLAIN_PASSWORD=$PLAIN_PASSWORD
ENV
}

cmd_down() {
  if pid_alive; then
    # Up to 15s for a clean shutdown.
    log "kafka stopped (pid $(stop_server "$PIDFILE" "$KAFKA_STATE_DIR/server.properties" 150))"
  fi
  rm -rf "$KAFKA_STATE_DIR"
}

cmd_status() {
  pid_alive && port_open "$KAFKA_PORT" && { echo "$BOOTSTRAP"; return 0; }
  return 1
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  pid) pid_alive && cat "$PIDFILE" ;;
  security) cmd_security ;;
  topics) shift; EXEC=1 run_class org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" "$@" ;;
  groups) shift; EXEC=1 run_class org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server "$BOOTSTRAP" "$@" ;;
  jars) jars_dir ;;
  logs) echo "$KAFKA_STATE_DIR/logs/server.log" ;;
  *) echo "usage: $0 up|down|status|pid|security|topics ARGS...|groups ARGS...|jars|logs" >&2; exit 2 ;;
esac
