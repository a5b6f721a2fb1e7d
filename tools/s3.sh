#!/usr/bin/env bash
# A single-process S3-compatible server on loopback for tests: SeaweedFS
# (`weed server`: master, volume server, filer and S3 gateway in one
# process), built by tools/tools.sh into the per-user cache. It implements
# conditional writes (PutObject and CompleteMultipartUpload with
# `If-None-Match: *` answer 412 PreconditionFailed when the key exists, and
# of concurrent creates of one key exactly one wins), which Delta commits
# need.
#
#   tools/s3.sh up       start (idempotent), wait until it takes a write,
#                        print the client settings on stdout as
#                        `export NAME=VALUE` lines: eval "$(tools/s3.sh up)"
#   tools/s3.sh down     stop it, remove its data
#   tools/s3.sh status   print the client settings if up, else exit 1
#   tools/s3.sh pid      print the server's process id if it runs, else exit
#                        1 (make bench reads its CPU time)
#   tools/s3.sh logs     print the path of the server log
#
# The settings printed (read as they are by the AWS SDKs and by delta-rs):
#   AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT   path-style addressing only
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY      the identity that may do anything
#                                                 (a second one, with both keys
#                                                 suffixed "-reader", may only
#                                                 read and list)
#   AWS_REGION                                    any region is accepted
#   AWS_ALLOW_HTTP=true                           for delta-rs / object_store
# Buckets are not created on upload (as on AWS): create them, or name them
# in S3_BUCKETS.
#
# Environment:
#   S3_PORT               S3 endpoint on 127.0.0.1 (default 18333); the
#                         server's internal HTTP and gRPC ports take the next
#                         seven, S3_PORT+1 .. S3_PORT+7
#   S3_ACCESS_KEY_ID      the identity's keys, for tests only (default
#   S3_SECRET_ACCESS_KEY  tributary / tributary-secret)
#   S3_REGION             printed as AWS_REGION (default us-east-1)
#   S3_BUCKETS            comma-separated buckets to create when `up` starts
#                         the server
#   S3_STATE_DIR          pid, config, logs and data
#                         (default ${TMPDIR:-/tmp}/tributary-s3-$S3_PORT)
#   S3_START_TIMEOUT      seconds to wait for the server (default 60)
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S3_PORT="${S3_PORT:-18333}"
S3_ACCESS_KEY_ID="${S3_ACCESS_KEY_ID:-tributary}"
S3_SECRET_ACCESS_KEY="${S3_SECRET_ACCESS_KEY:-tributary-secret}"
S3_REGION="${S3_REGION:-us-east-1}"
S3_BUCKETS="${S3_BUCKETS:-}"
S3_STATE_DIR="${S3_STATE_DIR:-${TMPDIR:-/tmp}/tributary-s3-$S3_PORT}"
S3_START_TIMEOUT="${S3_START_TIMEOUT:-60}"
ENDPOINT="http://127.0.0.1:$S3_PORT"
PIDFILE="$S3_STATE_DIR/weed.pid"
WEED="$TRIBUTARY_TOOLS/bin/weed"
# master, volume, filer HTTP; master, volume, filer, S3 gRPC
MASTER_PORT=$((S3_PORT + 1)) VOLUME_PORT=$((S3_PORT + 2)) FILER_PORT=$((S3_PORT + 3))
MASTER_GRPC=$((S3_PORT + 4)) VOLUME_GRPC=$((S3_PORT + 5)) FILER_GRPC=$((S3_PORT + 6))
S3_GRPC=$((S3_PORT + 7))
ALL_PORTS=("$S3_PORT" "$MASTER_PORT" "$VOLUME_PORT" "$FILER_PORT" "$MASTER_GRPC" "$VOLUME_GRPC" "$FILER_GRPC" "$S3_GRPC")

settings() {
  cat <<ENV
export AWS_ENDPOINT_URL=$ENDPOINT
export AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY_ID
export AWS_SECRET_ACCESS_KEY=$S3_SECRET_ACCESS_KEY
export AWS_REGION=$S3_REGION
export AWS_ALLOW_HTTP=true
ENV
}

# Built by tools/tools.sh on first use, as kafka.sh fetches its jars.
ensure_weed() {
  [[ -x "$WEED" ]] || "$TRIBUTARY_REPO/tools/tools.sh" s3 >&2
  [[ -x "$WEED" ]] || die "no $WEED (tools/tools.sh s3 failed)"
}

# "4.53-7506e5f91cd6" from "version 30GB 4.53 7506e5f91cd6 linux amd64".
weed_version() {
  "$WEED" version 2>/dev/null | awk '$1 == "version" { v = $3; if ($4 != "linux") v = v "-" $4; print v; exit }'
}

pid_alive() { server_alive "$PIDFILE" "$S3_STATE_DIR/s3.json"; }

# s3req METHOD PATH [BODY]: a signed (SigV4) request with curl; prints the
# HTTP status.
s3req() {
  local body="${3:-}" data=()
  (( $# < 3 )) || data=(--data-binary "$body")
  curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -X "$1" \
    --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY_ID:$S3_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: $(printf '%s' "$body" | sha256sum | cut -d' ' -f1)" \
    "${data[@]}" "$ENDPOINT$2" 2>/dev/null || true
}

# The server takes a write: a bucket, an object in it (which makes the
# master grow volumes on the volume server), then both removed.
probe() {
  local b=tributary-s3sh-probe
  [[ "$(s3req PUT "/$b")" == 200 ]] || return 1
  [[ "$(s3req PUT "/$b/probe" probe)" == 200 ]] || return 1
  [[ "$(s3req DELETE "/$b/probe")" == 204 ]] || return 1
  [[ "$(s3req DELETE "/$b")" == 204 ]] || return 1
}

write_config() {
  mkdir -p "$S3_STATE_DIR/data" "$S3_STATE_DIR/logs" "$S3_STATE_DIR/home"
  cat >"$S3_STATE_DIR/s3.json" <<JSON
{
  "identities": [
    {
      "name": "tributary",
      "credentials": [
        {"accessKey": "$S3_ACCESS_KEY_ID", "secretKey": "$S3_SECRET_ACCESS_KEY"}
      ],
      "actions": ["Admin", "Read", "List", "Tagging", "Write"]
    },
    {
      "name": "reader",
      "credentials": [
        {"accessKey": "$S3_ACCESS_KEY_ID-reader", "secretKey": "$S3_SECRET_ACCESS_KEY-reader"}
      ],
      "actions": ["Read", "List"]
    }
  ]
}
JSON
}

cmd_up() {
  command -v curl >/dev/null || die "curl not found"
  if pid_alive; then
    if probe; then settings; return 0; fi
    log "server pid $(cat "$PIDFILE") is running but not answering; restarting"
    cmd_down
  fi
  local p
  for p in "${ALL_PORTS[@]}"; do
    port_open "$p" && die "port $p (of S3_PORT..S3_PORT+7) is in use by another process"
  done
  ensure_weed
  rm -rf "$S3_STATE_DIR"
  write_config

  # setsid: own session and process group (pgid = pid), so `down` can kill
  # the whole group and the server does not get the caller's signals. Run
  # in the state dir with HOME there too, so no filer.toml, security.toml or
  # master.toml of the user's ($HOME/.seaweedfs, ./) is picked up.
  # A fresh master holds volume allocation ~5s in case an old cluster's
  # servers are still to report (master.volume_growth.allocation_deferral,
  # set here by its WEED_ variable): nothing can be, so no hold. Object
  # writes still wait ~8s after start, until the filer has joined the master
  # (its lock manager serialises writes to a key); the probe waits for that,
  # so `up` takes ~11s. No telemetry; the Iceberg and Lance ports are off.
  # One simple command run with &, so no shell of this script stays behind
  # holding its stdout (which would hang a caller's "$(tools/s3.sh up)").
  HOME="$S3_STATE_DIR/home" WEED_MASTER_VOLUME_GROWTH_ALLOCATION_DEFERRAL=0s \
    setsid bash -c 'echo $$ >"$0"; cd "$1" || exit 1; shift; exec "$@"' "$PIDFILE" "$S3_STATE_DIR" \
    "$WEED" server \
    -dir="$S3_STATE_DIR/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.port="$MASTER_PORT" -master.port.grpc="$MASTER_GRPC" \
    -master.telemetry=false -master.volumeSizeLimitMB=64 \
    -volume.port="$VOLUME_PORT" -volume.port.grpc="$VOLUME_GRPC" \
    -volume.max=0 -volume.preStopSeconds=0 \
    -filer -filer.port="$FILER_PORT" -filer.port.grpc="$FILER_GRPC" \
    -filer.localSocket="$S3_STATE_DIR/filer.sock" \
    -s3 -s3.port="$S3_PORT" -s3.port.grpc="$S3_GRPC" \
    -s3.port.iceberg=0 -s3.port.lance=0 \
    -s3.localSocket="$S3_STATE_DIR/s3.sock" \
    -s3.config="$S3_STATE_DIR/s3.json" -s3.autoCreateBucket=false \
    </dev/null >"$S3_STATE_DIR/logs/weed.log" 2>&1 &
  local deadline=$((SECONDS + S3_START_TIMEOUT))
  while [[ ! -s "$PIDFILE" ]]; do
    (( SECONDS < deadline )) || die "server did not start (see $S3_STATE_DIR/logs)"
    sleep 0.1
  done
  until port_open "$S3_PORT" && probe; do
    if ! pid_alive; then
      tail -n 40 "$S3_STATE_DIR/logs/weed.log" >&2 || true
      die "server exited during startup"
    fi
    (( SECONDS < deadline )) || {
      tail -n 20 "$S3_STATE_DIR/logs/weed.log" >&2 || true
      cmd_down; die "server did not take a write in ${S3_START_TIMEOUT}s"
    }
    sleep 0.3
  done
  local b
  for b in ${S3_BUCKETS//,/ }; do
    [[ "$(s3req PUT "/$b")" == 200 ]] || { cmd_down; die "could not create bucket $b"; }
    # A bucket's first write waits for its volumes to be allocated (seconds);
    # take that wait here rather than in the first test's first write.
    [[ "$(s3req PUT "/$b/.warmup" warmup)" == 200 && "$(s3req DELETE "/$b/.warmup")" == 204 ]] ||
      { cmd_down; die "could not write to bucket $b"; }
  done
  log "seaweedfs $(weed_version) up (pid $(cat "$PIDFILE")) at $ENDPOINT (logs $S3_STATE_DIR/logs)"
  settings
}

cmd_down() {
  if pid_alive; then
    # Its data goes with it, so a clean shutdown buys nothing: KILL after
    # 2s (a clean stop of all four servers can take 20s).
    log "seaweedfs stopped (pid $(stop_server "$PIDFILE" "$S3_STATE_DIR/s3.json" 20))"
  fi
  # The gRPC servers also listen on Unix sockets named by port, in /tmp.
  rm -f "/tmp/seaweedfs-master-grpc-$MASTER_GRPC.sock" "/tmp/seaweedfs-volume-grpc-$VOLUME_GRPC.sock" \
    "/tmp/seaweedfs-filer-grpc-$FILER_GRPC.sock" "/tmp/seaweedfs-s3-grpc-$S3_GRPC.sock"
  rm -rf "$S3_STATE_DIR"
}

service_main "$S3_PORT" "$S3_STATE_DIR/logs/weed.log" "$@"
