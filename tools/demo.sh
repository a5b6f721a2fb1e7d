#!/usr/bin/env bash
# make demo: the main job end to end on the embedded default. Builds the
# agent and the provider, starts `tributary-agent dev` (an in-process
# Kafka-protocol broker with a sample producer, plus the agent API), applies
# examples/quickstart with the real Terraform CLI through a dev_overrides
# CLI config, waits for the first commits, prints the first rows of the
# table as delta-rs reads them and where the files are, then stops
# everything. The table stays on disk.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1

tools/tools.sh terraform py >/dev/null
CGO_ENABLED=0 go build -o .tools/bin/tributary-agent ./agent/cmd/tributary-agent
mkdir -p .tools/plugins
go build -o .tools/plugins/terraform-provider-tributary .

work="$(mktemp -d "${TMPDIR:-/tmp}/tributary-demo.XXXXXX")"
port="${DEMO_PORT:-8470}"
echo "== starting tributary-agent dev (logs: $work/agent.log)"
.tools/bin/tributary-agent dev --listen "127.0.0.1:$port" --data-dir "$work/agent" \
  --token-file-out "$work/token" >"$work/agent.out" 2>"$work/agent.log" &
agent_pid=$!
stop() {
  kill -TERM "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null || true
}
trap stop EXIT

for _ in $(seq 1 100); do
  [[ -s "$work/token" ]] && curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$agent_pid" 2>/dev/null || { cat "$work/agent.log" >&2; exit 1; }
  sleep 0.2
done
export TRIBUTARY_ENDPOINT="http://127.0.0.1:$port" TRIBUTARY_TOKEN="$(cat "$work/token")"

cat >"$work/terraformrc" <<RC
provider_installation {
  dev_overrides {
    "tributary-io/tributary" = "$ROOT/.tools/plugins"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc"
cp -r examples/quickstart "$work/tf"
echo "== terraform apply examples/quickstart"
(cd "$work/tf" && "$ROOT/.tools/bin/terraform" apply -auto-approve -input=false -no-color | grep -v "^$")

echo "== waiting for the first commits"
status() { curl -fsS -H "Authorization: Bearer $TRIBUTARY_TOKEN" "$TRIBUTARY_ENDPOINT/v1/pipelines/quickstart"; }
location=""
for _ in $(seq 1 60); do
  location="$(status | .tools/py/bin/python -c '
import json, sys
t = json.load(sys.stdin)["status"]["tables"][0]
print(t["location"] if t["rows"] >= 200 else "")')"
  [[ -n "$location" ]] && break
  sleep 1
done
[[ -n "$location" ]] || { echo "no rows committed within 60s; agent log:" >&2; tail -50 "$work/agent.log" >&2; exit 1; }
status | .tools/py/bin/python -c '
import json, sys
for t in json.load(sys.stdin)["status"]["tables"]:
    print("table {destination_table}: state {state}, {rows} rows in {files} files, "
          "{corrupt_records} corrupt, log version {version}".format(**t))'

echo "== first rows, read with delta-rs (shown by DuckDB)"
.tools/py/bin/python - "$location" <<'PY'
import sys
import duckdb
from deltalake import DeltaTable
events = DeltaTable(sys.argv[1]).to_pyarrow_table()
# Five good records, then two that did not parse: their raw bytes are in
# _corrupt_record and their parsed columns are null.
duckdb.sql("""
  WITH t AS (SELECT _kafka.partition AS part, _kafka.offset AS "offset",
                    * EXCLUDE (_kafka, _corrupt_record), decode(_corrupt_record) AS _corrupt_record
             FROM events)
  (SELECT * FROM t WHERE _corrupt_record IS NULL ORDER BY ts, part, "offset" LIMIT 5)
  UNION ALL
  (SELECT * FROM t WHERE _corrupt_record IS NOT NULL ORDER BY part, "offset" LIMIT 2)
""").show(max_width=160)
print(f"{events.num_rows} rows; columns: {', '.join(events.column_names)}")
PY
echo "== the table is at $location"
echo "   (Parquet files plus a Delta log in _delta_log/; the agent's data is in $work/agent)"
echo "== stopping the agent"
