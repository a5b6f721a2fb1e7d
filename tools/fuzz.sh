#!/usr/bin/env bash
# API fuzzing (make test): runs `tributary-agent serve` with a token on a
# free port, gives it connection "example" to the broker at $KAFKA_BOOTSTRAP
# (the name the OpenAPI document's examples use), and lets schemathesis
# send it requests generated from its own /openapi.json for at most
# FUZZ_MAX_TIME seconds (default 60). It fails on any 5xx answer, on a
# crash (the agent no longer answers /healthz, or logged a panic), and on
# schemathesis's own errors.
#
#   KAFKA_BOOTSTRAP=127.0.0.1:19092 tools/fuzz.sh
#
# FUZZ_SEED repeats a run (the seed of a failed run is printed); by default
# each run draws a new one. FUZZ_EXAMPLES (default 10) bounds the cases per
# operation and phase. Expects `make tools` (.tools/py holds schemathesis;
# SCHEMATHESIS names another).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=tools/lib.sh
source tools/lib.sh

st="${SCHEMATHESIS:-$TRIBUTARY_TOOLS/py/bin/schemathesis}"
[[ -x "$st" ]] || die "$st not found: run make tools"
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:19092}"
seed="${FUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}"

work="$(mktemp -d)"
agent_pid=
finish() {
  local rc=$?
  if [[ -n "$agent_pid" ]]; then
    kill -TERM "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap finish EXIT

go build -o "$work/tributary-agent" ./agent/cmd/tributary-agent
token="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port"
mkdir -p "$work/data" "$work/warehouse"
TRIBUTARY_TOKEN="$token" "$work/tributary-agent" serve --listen "127.0.0.1:$port" \
  --data-dir "$work/data" --warehouse "$work/warehouse" >"$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 100); do
  curl -fsS "$url/healthz" >/dev/null 2>&1 && break
  kill -0 "$agent_pid" 2>/dev/null || { cat "$work/agent.log" >&2; die "the agent did not start"; }
  sleep 0.1
done

auth=(-H "Authorization: Bearer $token")
curl -fsS "${auth[@]}" -X PUT -H 'Content-Type: application/json' \
  -d "{\"bootstrap_servers\":[\"$bootstrap\"]}" "$url/v1/connections/example" >/dev/null ||
  die "could not create connection example"

log "schemathesis against $url (seed $seed, at most ${FUZZ_MAX_TIME:-60}s)"
rc=0
(cd "$work" && "$st" run "$url/openapi.json" "${auth[@]}" \
  --checks not_a_server_error --seed "$seed" \
  --max-examples "${FUZZ_EXAMPLES:-10}" --max-time "${FUZZ_MAX_TIME:-60}" \
  --request-timeout 30 --workers 2 --no-color) >"$work/schemathesis.log" 2>&1 || rc=$?
tail -n 25 "$work/schemathesis.log"

crashed=
curl -fsS --max-time 5 "$url/healthz" >/dev/null 2>&1 || crashed="it no longer answers /healthz"
grep -qE '^(panic|fatal error):' "$work/agent.log" && crashed="it panicked"
if [[ -n "$crashed" || $rc != 0 ]]; then
  if [[ -n "$crashed" ]]; then log "the agent crashed: $crashed"; fi
  log "the agent's log (last 50 lines):"
  tail -n 50 "$work/agent.log" >&2
  if (( rc != 0 )); then
    log "schemathesis failed (exit $rc); its log:"
    cat "$work/schemathesis.log" >&2
  fi
  die "API fuzzing failed; repeat it with FUZZ_SEED=$seed tools/fuzz.sh"
fi
log "no 5xx answer and no crash: $(grep -oE '[0-9]+ generated' "$work/schemathesis.log" | tail -n 1) test cases"
