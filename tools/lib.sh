# shellcheck shell=bash
# Shared helpers for tools/*.sh. Source it; it does not change shell options.

TRIBUTARY_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Everything fetched or built lives here, outside the work tree, so fresh
# clones (CI) on the same machine reuse it.
TRIBUTARY_CACHE="${TRIBUTARY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tributary}"
TRIBUTARY_TOOLS="$TRIBUTARY_REPO/.tools"

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# server_alive PIDFILE MARKER: the pid file names a live (not zombie)
# process whose command line holds MARKER (its config file), so a reused pid
# is never mistaken for the server.
server_alive() {
  [[ -f "$1" ]] || return 1
  local pid; pid="$(cat "$1")"
  [[ -n "$pid" && -r "/proc/$pid/stat" ]] || return 1
  [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$2"
}

# stop_server PIDFILE MARKER TENTHS: stops the server the pid file names
# (see server_alive), which leads its own process group (setsid): TERM to
# the group, KILL after TENTHS tenths of a second (or at once when it has
# gone) to whatever is left of it, then waits until init has reaped the
# orphaned leader, so no <defunct> process lingers. Prints its pid.
stop_server() {
  local pid i; pid="$(cat "$1")"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < $3; i++)); do server_alive "$1" "$2" || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do server_alive "$1" "$2" || break; sleep 0.1; done
  for ((i = 0; i < 50; i++)); do [[ -e "/proc/$pid" ]] || break; sleep 0.1; done
  echo "$pid"
}

# port_open PORT: something listens on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# cache_build KEY FUNC
#   Ensures $TRIBUTARY_CACHE/KEY exists. If missing, runs FUNC DIR under an
#   exclusive lock, where DIR is a fresh temp dir beside the final one; on
#   success DIR is renamed to KEY (atomic), so KEY exists only when complete.
#   FUNC's output goes to $TRIBUTARY_CACHE/.logs/KEY.log.
cache_build() {
  local key="$1" fn="$2" final="$TRIBUTARY_CACHE/$1"
  [[ -d "$final" ]] && return 0
  mkdir -p "$TRIBUTARY_CACHE/.logs"
  local logf="$TRIBUTARY_CACHE/.logs/$key.log"
  (
    exec 9>"$TRIBUTARY_CACHE/.$key.lock"
    flock 9
    [[ -d "$final" ]] && exit 0          # built by someone else meanwhile
    local tmp start rc=0
    tmp="$(mktemp -d "$TRIBUTARY_CACHE/.$key.tmp.XXXXXX")"
    chmod 755 "$tmp"
    start=$SECONDS
    log "building $key (log: $logf)"
    "$fn" "$tmp" >"$logf" 2>&1 || rc=$?
    if (( rc != 0 )); then
      chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"
      log "FAILED building $key (exit $rc); last lines of $logf:"
      tail -n 30 "$logf" >&2
      exit "$rc"
    fi
    mv -T "$tmp" "$final"
    log "built $key in $((SECONDS - start))s"
  )
}

# maven_jars NAME POM JAR: the folder of the jars that POM (a pom that
# copies its dependencies: mvn dependency:copy-dependencies) resolves,
# fetched once into the cache entry NAME-<hash of POM>, so editing the pom
# fetches anew; JAR must be among them. Prints the folder.
maven_jars() {
  local key
  key="$1-$(sha256sum <"$2" | cut -c1-8)"
  MAVEN_POM="$2" MAVEN_JAR="$3" cache_build "$key" fetch_maven_jars
  echo "$TRIBUTARY_CACHE/$key/jars"
}

# fetch_maven_jars DIR: maven_jars' fetch, of MAVEN_POM into DIR/jars.
fetch_maven_jars() {
  command -v mvn >/dev/null || { echo "mvn not found"; return 1; }
  mvn -B -q -f "$MAVEN_POM" dependency:copy-dependencies -DoutputDirectory="$1/jars"
  ls "$1/jars"
  [[ -f "$1/jars/$MAVEN_JAR" ]]
}

# certs_dir STATE_DIR DEFAULT: the certificate directory the service whose
# state is in STATE_DIR was started with (its `up` records it with
# record_certs_dir), else DEFAULT; so `status` and the settings name the
# files the running service uses, whatever TRIBUTARY_CERTS_DIR says now.
certs_dir() { cat "$1/certs-dir" 2>/dev/null || echo "$2"; }

# record_certs_dir STATE_DIR DIR: see certs_dir.
record_certs_dir() { echo "$2" >"$1/certs-dir"; }

# make_test_certs DIR [P12_PASSWORD]: the throw-away CA and certificates of
# the secure test services in DIR (see agent/cmd/testcerts, which keeps a
# complete set, so services given one DIR share one CA).
make_test_certs() {
  (cd "$TRIBUTARY_REPO" && go build -o "$TRIBUTARY_TOOLS/bin/tributary-testcerts" ./agent/cmd/testcerts) ||
    die "building agent/cmd/testcerts failed"
  "$TRIBUTARY_TOOLS/bin/tributary-testcerts" -dir "$1" ${2:+-p12-password "$2"} ||
    die "writing the test certificates into $1 failed"
}

# start_detached PIDFILE DIR LOGFILE COMMAND...: starts COMMAND in DIR in
# its own session and process group (setsid; pgid = pid, so stop_server can
# kill the whole group, and the server does not get the caller's signals),
# with no input and its output in LOGFILE, writes its pid to PIDFILE and
# waits up to 10 s for that. One simple command run with &, so no shell of
# the caller stays behind holding its stdout (which would hang a caller's
# "$(tools/x.sh up)").
start_detached() {
  local pidfile="$1" dir="$2" logfile="$3" i
  shift 3
  setsid bash -c 'echo $$ >"$0"; cd "$1" || exit 1; shift; exec "$@"' "$pidfile" "$dir" "$@" \
    </dev/null >"$logfile" 2>&1 &
  for ((i = 0; i < 100; i++)); do [[ -s "$pidfile" ]] && return 0; sleep 0.1; done
  return 1
}

# wait_up PIDFILE MARKER LOGFILE TIMEOUT PROBE...: waits until the command
# PROBE succeeds, failing (with the log's tail) if the server named by
# PIDFILE and MARKER (see server_alive) exits or TIMEOUT seconds pass.
wait_up() {
  local pidfile="$1" marker="$2" logfile="$3" timeout="$4" deadline=$((SECONDS + $4))
  shift 4
  until "$@"; do
    if ! server_alive "$pidfile" "$marker"; then
      tail -n 40 "$logfile" >&2 || true
      log "error: server exited during startup"; return 1
    fi
    if (( SECONDS >= deadline )); then
      tail -n 20 "$logfile" >&2 || true
      log "error: server did not answer in $timeout s"; return 1
    fi
    sleep 0.2
  done
}

# service_main runs the subcommand $3 of a script that starts a test server
# and defines cmd_up, cmd_down, pid_alive, settings and PIDFILE: up, down,
# status (print the settings when the server is alive and listens on port
# $1, exit 1 otherwise), pid (print the server's process id when it is
# alive, exit 1 otherwise: make bench reads its CPU time) or logs (print
# $2, the server's log).
service_main() {
  local port=$1 logfile=$2
  case "${3:-}" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) pid_alive && port_open "$port" && settings ;;
    pid) pid_alive && cat "$PIDFILE" ;;
    logs) echo "$logfile" ;;
    *) echo "usage: $0 up|down|status|pid|logs" >&2; exit 2 ;;
  esac
}
