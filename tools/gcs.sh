#!/usr/bin/env bash
# A Google Cloud Storage emulator on loopback for tests: fake-gcs-server
# (its JSON API over plain HTTP, objects in memory), built by
# tools/tools.sh into the per-user cache. It implements the precondition
# Delta commits need: an upload with ifGenerationMatch=0 answers 412 when
# the object exists, checked under the server's lock, so of concurrent
# creates of one name exactly one wins. It checks no credentials (any
# request may do anything).
#
#   tools/gcs.sh up       start (idempotent), wait until it answers, print
#                         the client settings on stdout as `export
#                         NAME=VALUE` lines: eval "$(tools/gcs.sh up)"
#   tools/gcs.sh down     stop it (its objects go with it)
#   tools/gcs.sh status   print the client settings if up, else exit 1
#   tools/gcs.sh logs     print the path of the server log
#
# The setting printed, read by Google's storage clients (the agent's
# gs:// driver among them), which then send no credentials:
#   STORAGE_EMULATOR_HOST=127.0.0.1:$GCS_PORT
#
# Environment:
#   GCS_PORT           the endpoint's port on 127.0.0.1 (default 18350)
#   GCS_BUCKETS        comma-separated buckets to create when `up` starts
#                      the server
#   GCS_STATE_DIR      pid, logs and the buckets to create
#                      (default ${TMPDIR:-/tmp}/tributary-gcs-$GCS_PORT)
#   GCS_START_TIMEOUT  seconds to wait for the server (default 60)
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GCS_PORT="${GCS_PORT:-18350}"
GCS_BUCKETS="${GCS_BUCKETS:-}"
GCS_STATE_DIR="${GCS_STATE_DIR:-${TMPDIR:-/tmp}/tributary-gcs-$GCS_PORT}"
GCS_START_TIMEOUT="${GCS_START_TIMEOUT:-60}"
ENDPOINT="http://127.0.0.1:$GCS_PORT"
PIDFILE="$GCS_STATE_DIR/server.pid"
LOGFILE="$GCS_STATE_DIR/server.log"
SEED="$GCS_STATE_DIR/buckets" # on the command line: the server's marker
SERVER="$TRIBUTARY_TOOLS/bin/fake-gcs-server"

settings() { echo "export STORAGE_EMULATOR_HOST=127.0.0.1:$GCS_PORT"; }

pid_alive() { server_alive "$PIDFILE" "$SEED"; }

probe() { [[ "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$ENDPOINT/storage/v1/b" 2>/dev/null)" == 200 ]]; }

cmd_up() {
  command -v curl >/dev/null || die "curl not found"
  if pid_alive; then
    if probe; then settings; return 0; fi
    log "server pid $(cat "$PIDFILE") is running but not answering; restarting"
    cmd_down
  fi
  port_open "$GCS_PORT" && die "port $GCS_PORT is in use by another process"
  [[ -x "$SERVER" ]] || "$TRIBUTARY_REPO/tools/tools.sh" gcs >&2
  [[ -x "$SERVER" ]] || die "no $SERVER (tools/tools.sh gcs failed)"
  rm -rf "$GCS_STATE_DIR"
  mkdir -p "$SEED"
  # The server creates a bucket for each folder of -data at start.
  local b
  for b in ${GCS_BUCKETS//,/ }; do mkdir -p "$SEED/$b"; done
  start_detached "$PIDFILE" "$GCS_STATE_DIR" "$LOGFILE" \
    "$SERVER" -scheme http -host 127.0.0.1 -port "$GCS_PORT" -backend memory -data "$SEED" \
    -public-host "127.0.0.1:$GCS_PORT" -external-url "$ENDPOINT" -log-level warn ||
    die "server did not start (see $LOGFILE)"
  wait_up "$PIDFILE" "$SEED" "$LOGFILE" "$GCS_START_TIMEOUT" probe || { cmd_down; die "fake-gcs-server did not come up"; }
  log "fake-gcs-server up (pid $(cat "$PIDFILE")) at $ENDPOINT (log $LOGFILE)"
  settings
}

cmd_down() {
  if pid_alive; then
    log "fake-gcs-server stopped (pid $(stop_server "$PIDFILE" "$SEED" 20))"
  fi
  rm -rf "$GCS_STATE_DIR"
}

service_main "$GCS_PORT" "$LOGFILE" "$@"
