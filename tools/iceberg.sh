#!/usr/bin/env bash
# The Apache Iceberg REST catalog reference server (ICEBERG_VERSION,
# org.apache.iceberg.rest.RESTCatalogServer from iceberg-open-api's test
# fixtures) for local tests, run from jars that Maven resolves
# (tools/iceberg/pom.xml) into the per-user cache. Behind it, Iceberg's JDBC
# catalog keeps the catalog in a SQLite file of its state directory and
# writes table metadata with Hadoop's local file system, so the tables it
# serves live on local disk (a table may be created at any local location:
# the agent's Iceberg mirrors are created at their Delta tables' folders).
# No authentication. The server listens on every interface at
# ICEBERG_REST_PORT (it has no setting for the address); clients use
# 127.0.0.1.
#
#   tools/iceberg.sh up       start (idempotent), wait until GET /v1/config
#                             answers, print ICEBERG_REST_URI=<uri> on stdout
#   tools/iceberg.sh down     stop it (TERM, then KILL), remove its state
#   tools/iceberg.sh status   print ICEBERG_REST_URI=<uri> if up, else exit 1
#   tools/iceberg.sh jars     fetch the jars only; print their directory
#   tools/iceberg.sh spark-jar
#                             fetch Iceberg's Spark runtime for the Spark of
#                             tools/spark (tools/iceberg/spark-pom.xml, 45 MB,
#                             ~3 s cold); print its path
#   tools/iceberg.sh logs     print the path of the server log
#
# Environment:
#   ICEBERG_REST_PORT      HTTP port (default 19181)
#   ICEBERG_STATE_DIR      pid, SQLite catalog, warehouse and logs (default
#                          ${TMPDIR:-/tmp}/tributary-iceberg-$ICEBERG_REST_PORT)
#   ICEBERG_WAREHOUSE      where tables created without a location go
#                          (default $ICEBERG_STATE_DIR/warehouse)
#   ICEBERG_HEAP_OPTS      JVM heap (default -Xms64m -Xmx256m)
#   ICEBERG_START_TIMEOUT  seconds to wait for it (default 60)
# Cold, `up` fetches 82 MB of jars (38, Hadoop's shaded client most of it)
# in ~8 s with Maven's plugins in ~/.m2; then the server answers in ~1 s.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ICEBERG_VERSION=1.10.1
ICEBERG_REST_PORT="${ICEBERG_REST_PORT:-19181}"
ICEBERG_STATE_DIR="${ICEBERG_STATE_DIR:-${TMPDIR:-/tmp}/tributary-iceberg-$ICEBERG_REST_PORT}"
ICEBERG_WAREHOUSE="${ICEBERG_WAREHOUSE:-$ICEBERG_STATE_DIR/warehouse}"
ICEBERG_HEAP_OPTS="${ICEBERG_HEAP_OPTS:--Xms64m -Xmx256m}"
ICEBERG_START_TIMEOUT="${ICEBERG_START_TIMEOUT:-60}"
URI="http://127.0.0.1:$ICEBERG_REST_PORT"
POM="$TRIBUTARY_REPO/tools/iceberg/pom.xml"
PIDFILE="$ICEBERG_STATE_DIR/iceberg.pid"
LOGFILE="$ICEBERG_STATE_DIR/iceberg.log"
# On the server's command line, so a reused pid is never taken for it.
MARKER="tributary.iceberg.state=$ICEBERG_STATE_DIR"

jars_dir() { maven_jars "iceberg-rest-$ICEBERG_VERSION" "$POM" "iceberg-open-api-$ICEBERG_VERSION-test-fixtures.jar"; }

spark_jar() {
  local jar="iceberg-spark-runtime-4.0_2.13-$ICEBERG_VERSION.jar" dir
  dir="$(maven_jars "iceberg-spark-$ICEBERG_VERSION" "$TRIBUTARY_REPO/tools/iceberg/spark-pom.xml" "$jar")"
  echo "$dir/$jar"
}

pid_alive() { server_alive "$PIDFILE" "$MARKER"; }

probe() { curl -sf -o /dev/null --max-time 5 "$URI/v1/config"; }

cmd_up() {
  if pid_alive; then
    if probe; then echo "ICEBERG_REST_URI=$URI"; return 0; fi
    log "iceberg catalog pid $(cat "$PIDFILE") is running but not answering; restarting"
    cmd_down
  fi
  port_open "$ICEBERG_REST_PORT" && die "port $ICEBERG_REST_PORT is in use by another process"
  command -v java >/dev/null || die "java not found"
  local jars; jars="$(jars_dir)"
  rm -rf "$ICEBERG_STATE_DIR"
  mkdir -p "$ICEBERG_STATE_DIR" "$ICEBERG_WAREHOUSE"
  # The server reads its catalog's properties from CATALOG_* variables:
  # CATALOG_REST_PORT is rest.port, CATALOG_URI the JDBC URL.
  # shellcheck disable=SC2086 # the heap options are words
  start_detached "$PIDFILE" "$ICEBERG_STATE_DIR" "$LOGFILE" \
    env CATALOG_WAREHOUSE="file://$ICEBERG_WAREHOUSE" CATALOG_URI="jdbc:sqlite:$ICEBERG_STATE_DIR/catalog.db" \
    CATALOG_REST_PORT="$ICEBERG_REST_PORT" \
    java $ICEBERG_HEAP_OPTS -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true "-D$MARKER" \
    -cp "$jars/*" org.apache.iceberg.rest.RESTCatalogServer ||
    die "iceberg catalog did not start (see $LOGFILE)"
  wait_up "$PIDFILE" "$MARKER" "$LOGFILE" "$ICEBERG_START_TIMEOUT" probe ||
    { pid_alive && stop_server "$PIDFILE" "$MARKER" 30 >/dev/null; die "iceberg catalog did not come up (log $LOGFILE)"; }
  log "iceberg REST catalog $ICEBERG_VERSION up (pid $(cat "$PIDFILE"), log $LOGFILE)"
  echo "ICEBERG_REST_URI=$URI"
}

cmd_down() {
  if pid_alive; then
    log "iceberg REST catalog stopped (pid $(stop_server "$PIDFILE" "$MARKER" 100))"
  fi
  rm -rf "$ICEBERG_STATE_DIR"
}

cmd_status() {
  pid_alive && port_open "$ICEBERG_REST_PORT" && { echo "ICEBERG_REST_URI=$URI"; return 0; }
  return 1
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  jars) jars_dir ;;
  spark-jar) spark_jar ;;
  logs) echo "$LOGFILE" ;;
  *) echo "usage: $0 up|down|status|jars|spark-jar|logs" >&2; exit 2 ;;
esac
