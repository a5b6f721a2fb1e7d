#!/usr/bin/env bash
# A Confluent-compatible schema registry on loopback for tests: franz-go's
# in-memory srfake behind HTTPS and basic auth, served by tools/registry (a
# small Go program of this module, built here into .tools/bin) with a
# certificate of the test CA (agent/cmd/testcerts). Its state is in memory:
# `down` (or a restart) forgets every schema.
#
#   tools/registry.sh up      start (idempotent), wait until it answers,
#                             print the client settings on stdout as
#                             `export NAME=VALUE` lines:
#                             eval "$(tools/registry.sh up)"
#   tools/registry.sh down    stop it
#   tools/registry.sh status  print the client settings if up, else exit 1
#   tools/registry.sh logs    print the path of the server log (one line a
#                             request: method, path, status)
#
# The settings printed:
#   SCHEMA_REGISTRY_URL=https://127.0.0.1:$REGISTRY_PORT
#   SCHEMA_REGISTRY_KEY, SCHEMA_REGISTRY_SECRET   the API key and secret
#       (basic auth) every request but GET /healthz must carry; others get 401
#   SCHEMA_REGISTRY_CA_FILE   the PEM CA that signed its certificate
#
# Environment:
#   REGISTRY_PORT           port on 127.0.0.1 (default 18081)
#   REGISTRY_KEY            the key and secret, for tests only (default
#   REGISTRY_SECRET         tributary-sr / tributary-sr-secret)
#   REGISTRY_STATE_DIR      pid, log and certificates (default
#                           ${TMPDIR:-/tmp}/tributary-registry-$REGISTRY_PORT)
#   TRIBUTARY_CERTS_DIR     take the certificates from (or make them in) this
#                           directory instead of $REGISTRY_STATE_DIR/certs, e.g.
#                           to share one CA with tools/kafka.sh
#   REGISTRY_START_TIMEOUT  seconds to wait for it once built (default 60;
#                           it answers in well under a second)
# `up` builds tools/registry first: under a second warm, 1.5-2 min with an
# empty Go build cache on 2 cores (net/http and crypto compiled), which
# `make test` has already filled by then.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REGISTRY_PORT="${REGISTRY_PORT:-18081}"
REGISTRY_KEY="${REGISTRY_KEY:-tributary-sr}"
REGISTRY_SECRET="${REGISTRY_SECRET:-tributary-sr-secret}"
REGISTRY_STATE_DIR="${REGISTRY_STATE_DIR:-${TMPDIR:-/tmp}/tributary-registry-$REGISTRY_PORT}"
REGISTRY_START_TIMEOUT="${REGISTRY_START_TIMEOUT:-60}"
# Where `up` makes the certificates; CERTS_DIR is where those of a running
# server are.
NEW_CERTS_DIR="${TRIBUTARY_CERTS_DIR:-$REGISTRY_STATE_DIR/certs}"
CERTS_DIR="$(certs_dir "$REGISTRY_STATE_DIR" "$NEW_CERTS_DIR")"
URL="https://127.0.0.1:$REGISTRY_PORT"
PIDFILE="$REGISTRY_STATE_DIR/registry.pid"
BIN="$TRIBUTARY_TOOLS/bin/tributary-registry"
# On the server's command line, so a reused pid is never taken for it.
MARKER="tributary-registry -addr 127.0.0.1:$REGISTRY_PORT"

settings() {
  cat <<ENV
export SCHEMA_REGISTRY_URL=$URL
export SCHEMA_REGISTRY_KEY=$REGISTRY_KEY
export SCHEMA_REGISTRY_SECRET=$REGISTRY_SECRET
export SCHEMA_REGISTRY_CA_FILE=$CERTS_DIR/ca.pem
ENV
}

pid_alive() { server_alive "$PIDFILE" "$MARKER"; }

# An authenticated request succeeds.
probe() {
  [[ "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$CERTS_DIR/ca.pem" \
    -u "$REGISTRY_KEY:$REGISTRY_SECRET" "$URL/subjects" 2>/dev/null)" == 200 ]]
}

cmd_up() {
  command -v curl >/dev/null || die "curl not found"
  if pid_alive; then
    if probe; then settings; return 0; fi
    log "registry pid $(cat "$PIDFILE") is running but not answering; restarting"
    cmd_down
  fi
  port_open "$REGISTRY_PORT" && die "port $REGISTRY_PORT is in use by another process"
  # Incremental: well under a second when nothing changed.
  (cd "$TRIBUTARY_REPO" && go build -o "$BIN" ./tools/registry) || die "building tools/registry failed"
  rm -rf "$REGISTRY_STATE_DIR"
  mkdir -p "$REGISTRY_STATE_DIR"
  CERTS_DIR="$NEW_CERTS_DIR"
  make_test_certs "$CERTS_DIR"
  record_certs_dir "$REGISTRY_STATE_DIR" "$CERTS_DIR"
  # setsid: own session and process group, so the server does not get the
  # caller's signals; one simple command run with &, so no shell of this
  # script holds the caller's stdout.
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PIDFILE" \
    "$BIN" -addr "127.0.0.1:$REGISTRY_PORT" -key "$REGISTRY_KEY" -secret "$REGISTRY_SECRET" \
    -tls-cert "$CERTS_DIR/server.pem" -tls-key "$CERTS_DIR/server-key.pem" \
    </dev/null >"$REGISTRY_STATE_DIR/registry.log" 2>&1 &
  local deadline=$((SECONDS + REGISTRY_START_TIMEOUT))
  while [[ ! -s "$PIDFILE" ]]; do
    (( SECONDS < deadline )) || die "registry did not start (see $REGISTRY_STATE_DIR)"
    sleep 0.1
  done
  until probe; do
    if ! pid_alive; then
      tail -n 20 "$REGISTRY_STATE_DIR/registry.log" >&2 || true
      die "registry exited during startup"
    fi
    (( SECONDS < deadline )) || { cmd_down; die "registry did not answer in ${REGISTRY_START_TIMEOUT}s"; }
    sleep 0.1
  done
  log "schema registry (srfake) up (pid $(cat "$PIDFILE")) at $URL (log $REGISTRY_STATE_DIR/registry.log)"
  settings
}

cmd_down() {
  if pid_alive; then
    log "schema registry stopped (pid $(stop_server "$PIDFILE" "$MARKER" 30))"
  fi
  rm -rf "$REGISTRY_STATE_DIR"
}

service_main "$REGISTRY_PORT" "$REGISTRY_STATE_DIR/registry.log" "$@"
