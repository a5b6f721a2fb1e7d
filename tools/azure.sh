#!/usr/bin/env bash
# An Azure Blob Storage emulator on loopback for tests: Azurite's blob
# service (blobs in its state dir), installed with npm by tools/tools.sh into
# the per-user cache and run with node. It checks Shared Key signatures
# against its well-known development account and implements the condition
# Delta commits need: a Put Blob or Put Block List with `If-None-Match: *`
# fails when the blob exists, so of concurrent creates of one name exactly
# one wins.
#
#   tools/azure.sh up       start (idempotent), wait until it answers,
#                           print the client settings on stdout as `export
#                           NAME=VALUE` lines: eval "$(tools/azure.sh up)"
#   tools/azure.sh down     stop it (its blobs go with it)
#   tools/azure.sh status   print the client settings if up, else exit 1
#   tools/azure.sh logs     print the path of the server log
#
# The settings printed, read by the agent's azblob:// driver (gocloud.dev's
# azureblob and the Azure SDK): the account and its key (Shared Key), and
# the blob endpoint http://127.0.0.1:$AZURE_PORT/devstoreaccount1 as a
# domain (a domain of 127.0.0.1 makes the account the URL path's first
# segment, as the emulator wants) and protocol:
#   AZURE_STORAGE_ACCOUNT=devstoreaccount1
#   AZURE_STORAGE_KEY=<Azurite's published development key>
#   AZURE_STORAGE_DOMAIN=127.0.0.1:$AZURE_PORT
#   AZURE_STORAGE_PROTOCOL=http
#
# Environment:
#   AZURE_PORT           the blob endpoint's port on 127.0.0.1 (default 18351)
#   AZURE_CONTAINERS     comma-separated containers to create when `up`
#                        starts the server
#   AZURE_STATE_DIR      pid, logs and the server's workspace (its blobs)
#                        (default ${TMPDIR:-/tmp}/tributary-azure-$AZURE_PORT)
#   AZURE_START_TIMEOUT  seconds to wait for the server (default 60)
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AZURE_PORT="${AZURE_PORT:-18351}"
AZURE_CONTAINERS="${AZURE_CONTAINERS:-}"
AZURE_STATE_DIR="${AZURE_STATE_DIR:-${TMPDIR:-/tmp}/tributary-azure-$AZURE_PORT}"
AZURE_START_TIMEOUT="${AZURE_START_TIMEOUT:-60}"
# Azurite's development account; its key is published in Azurite's docs
# and grants nothing anywhere else.
ACCOUNT=devstoreaccount1
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
ENDPOINT="http://127.0.0.1:$AZURE_PORT/$ACCOUNT"
PIDFILE="$AZURE_STATE_DIR/server.pid"
LOGFILE="$AZURE_STATE_DIR/server.log"
WORKSPACE="$AZURE_STATE_DIR/workspace" # on the command line: the server's marker
MAIN="$TRIBUTARY_TOOLS/azurite/node_modules/azurite/dist/src/blob/main.js"

settings() {
  cat <<ENV
export AZURE_STORAGE_ACCOUNT=$ACCOUNT
export AZURE_STORAGE_KEY=$KEY
export AZURE_STORAGE_DOMAIN=127.0.0.1:$AZURE_PORT
export AZURE_STORAGE_PROTOCOL=http
ENV
}

pid_alive() { server_alive "$PIDFILE" "$WORKSPACE"; }

# azreq METHOD PATH QUERY: a request signed with the account's Shared Key
# (the service's canonical form: headers, then /account/PATH, then the
# query parameters one a line); prints the HTTP status, and writes the
# response body to $AZREQ_BODY if set.
azreq() {
  local date sig
  date="$(LC_ALL=C TZ=GMT date '+%a, %d %b %Y %H:%M:%S GMT')"
  sig="$(printf '%s\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:%s\nx-ms-version:2021-08-06\n/%s/%s/%s\n%s' \
    "$1" "$date" "$ACCOUNT" "$ACCOUNT" "$2" "${3/=/:}" |
    openssl dgst -sha256 -mac HMAC -macopt "hexkey:$(printf '%s' "$KEY" | base64 -d | od -An -tx1 | tr -d ' \n')" -binary |
    base64)"
  curl -sS -o "${AZREQ_BODY:-/dev/null}" -w '%{http_code}' --max-time 10 -X "$1" -H "Content-Length: 0" \
    -H "x-ms-date: $date" -H "x-ms-version: 2021-08-06" -H "Authorization: SharedKey $ACCOUNT:$sig" \
    "$ENDPOINT/$2?$3" 2>/dev/null || true
}

probe() { [[ "$(azreq GET "" comp=list)" == 200 ]]; }

cmd_up() {
  command -v curl >/dev/null || die "curl not found"
  command -v openssl >/dev/null || die "openssl not found"
  if pid_alive; then
    if probe; then settings; return 0; fi
    log "server pid $(cat "$PIDFILE") is running but not answering; restarting"
    cmd_down
  fi
  port_open "$AZURE_PORT" && die "port $AZURE_PORT is in use by another process"
  [[ -f "$MAIN" ]] || "$TRIBUTARY_REPO/tools/tools.sh" azure >&2
  [[ -f "$MAIN" ]] || die "no $MAIN (tools/tools.sh azure failed)"
  rm -rf "$AZURE_STATE_DIR"
  mkdir -p "$WORKSPACE"
  # --skipApiVersionCheck: the Azure SDK in the agent may speak a newer
  # service version than this Azurite knows; the operations it uses are
  # the same.
  start_detached "$PIDFILE" "$AZURE_STATE_DIR" "$LOGFILE" \
    node "$MAIN" --blobHost 127.0.0.1 --blobPort "$AZURE_PORT" --location "$WORKSPACE" \
    --skipApiVersionCheck --disableTelemetry ||
    die "server did not start (see $LOGFILE)"
  wait_up "$PIDFILE" "$WORKSPACE" "$LOGFILE" "$AZURE_START_TIMEOUT" probe || { cmd_down; die "Azurite did not come up"; }
  local c
  for c in ${AZURE_CONTAINERS//,/ }; do
    # (a container's name is 3 to 63 lowercase letters, digits and dashes)
    [[ "$(AZREQ_BODY="$AZURE_STATE_DIR/create.xml" azreq PUT "$c" restype=container)" == 201 ]] ||
      { cat "$AZURE_STATE_DIR/create.xml" >&2; cmd_down; die "could not create container $c"; }
  done
  log "azurite up (pid $(cat "$PIDFILE")) at $ENDPOINT (log $LOGFILE)"
  settings
}

cmd_down() {
  if pid_alive; then
    log "azurite stopped (pid $(stop_server "$PIDFILE" "$WORKSPACE" 20))"
  fi
  rm -rf "$AZURE_STATE_DIR"
}

service_main "$AZURE_PORT" "$LOGFILE" "$@"
