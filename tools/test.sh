#!/usr/bin/env bash
# The full test suite (`make test`, and so CI): vet, lint, unit tests, one run of
# every benchmark (so none rots), then with a
# local Kafka broker the provider acceptance tests under Terraform and under
# OpenTofu, the end-to-end tests, a fuzz run of the agent's API
# (tools/fuzz.sh), the Helm chart's checks (tools/chart.sh), and a docs
# staleness check. Kafka, the
# schema registry and the S3 server are always stopped at the end, and the
# first failing step's exit code is kept.
# Expects `make tools` to have run (the Makefile's test target does that).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

export PATH="$ROOT/.tools/bin:$PATH"
export CHECKPOINT_DISABLE=1   # no version-check calls from terraform/tofu
# A TF_CLI_CONFIG_FILE naming a missing file only makes terraform warn.
if [[ -n "${TF_CLI_CONFIG_FILE:-}" && ! -f "$TF_CLI_CONFIG_FILE" ]]; then
  unset TF_CLI_CONFIG_FILE
fi
export KAFKA_PORT="${KAFKA_PORT:-19092}"
export KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
export TRIBUTARY_PY="$ROOT/.tools/py/bin/python"
# PySpark, delta-spark (python/) and the Delta jars (jars/) for the Spark
# reader of the end-to-end tests (agent/e2e/spark_test.go).
export TRIBUTARY_SPARK="$ROOT/.tools/spark"

# step prints a step's heading; each step's elapsed seconds are printed when
# the next one starts, and all of them, with the total, at the end (also
# after a failure), so that CI logs show where the time goes.
suite_start=$SECONDS step_name= step_start=
step_times=()
end_step() {
  [[ -n "$step_name" ]] || return 0
  local took=$((SECONDS - step_start))
  printf -- '--- %s: %ds\n' "$step_name" "$took"
  step_times+=("$(printf '%6ds  %s' "$took" "$step_name")")
  step_name=
}
step() {
  end_step
  step_name="$*" step_start=$SECONDS
  printf '\n=== %s\n' "$*"
}
print_times() {
  end_step
  printf '\n=== time per step\n'
  if (( ${#step_times[@]} )); then printf '%s\n' "${step_times[@]}"; fi
  printf '%6ds  total\n' "$((SECONDS - suite_start))"
}
has_pkgs() { [[ -n "$(go list "$@" 2>/dev/null)" ]]; }

passed= kafka_started= s3_started= gcs_started= azure_started= registry_started= iceberg_started= hms_started=
# One throw-away CA for the broker's secure listeners and the registry.
export TRIBUTARY_CERTS_DIR
TRIBUTARY_CERTS_DIR="$(mktemp -d)"
cleanup() {
  local rc=$?
  if [[ -n "$kafka_started" ]]; then
    step "kafka down"
    tools/kafka.sh down || true
  fi
  if [[ -n "$s3_started" ]]; then
    step "s3 down"
    tools/s3.sh down || true
  fi
  if [[ -n "$gcs_started" ]]; then
    step "gcs down"
    tools/gcs.sh down || true
  fi
  if [[ -n "$azure_started" ]]; then
    step "azure down"
    tools/azure.sh down || true
  fi
  if [[ -n "$registry_started" ]]; then
    step "schema registry down"
    tools/registry.sh down || true
  fi
  if [[ -n "$iceberg_started" ]]; then
    step "iceberg REST catalog down"
    tools/iceberg.sh down || true
  fi
  if [[ -n "$hms_started" ]]; then
    step "hive metastore down"
    tools/hms.sh down || true
  fi
  rm -rf "$TRIBUTARY_CERTS_DIR"
  print_times
  if [[ -n "$passed" && $rc == 0 ]]; then
    printf '\n=== all tests passed\n'
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "go vet"
go vet ./...

# golangci-lint over the whole tree with .golangci.yml (make lint): the
# standard linters plus errname, revive, nolintlint, errorlint and
# contextcheck; every exclusion is in that file with its reason.
step "lint (make lint)"
make --no-print-directory lint

step "unit tests"
go test -race -count=1 -short ./...

step "benchmarks, once each (a smoke test; measure with go test -bench or make bench)"
# Only the packages that declare a benchmark: the others' test binaries
# would be built for nothing, and the agent command's TestMain builds the
# agent before it runs any test (half a minute).
bench_pkgs=()
while IFS= read -r dir; do
  bench_pkgs+=("./$dir")
done < <(grep -rl --include='*_test.go' --exclude-dir=.tools --exclude-dir=.git '^func Benchmark' . |
  xargs -r -n1 dirname | sed 's|^\./||' | sort -u)
if (( ${#bench_pkgs[@]} )); then
  bench_log="$(mktemp)"
  go test -run '^$' -bench . -benchtime 1x "${bench_pkgs[@]}" >"$bench_log" 2>&1 || { cat "$bench_log"; rm -f "$bench_log"; exit 1; }
  rm -f "$bench_log"
fi

step "kafka up"
kafka_started=1
tools/kafka.sh up
# The SASL_SSL and mTLS listeners' addresses, certificate files and users
# (KAFKA_SASL_SSL_BOOTSTRAP, KAFKA_CA_FILE, KAFKA_SCRAM_USER, ...; see
# tools/kafka.sh) go to the tests.
kafka_env="$(mktemp)"
tools/kafka.sh security >"$kafka_env"
# shellcheck disable=SC1090
source "$kafka_env"
rm -f "$kafka_env"

# The Confluent-compatible schema registry (srfake, HTTPS and basic auth)
# the end-to-end tests register Avro and Protobuf schemas in (with
# tools/produce_sr.py); SCHEMA_REGISTRY_URL, _KEY, _SECRET and _CA_FILE go to
# the tests.
step "schema registry up"
registry_started=1
export REGISTRY_PORT="${REGISTRY_PORT:-18081}"
registry_env="$(mktemp)"
tools/registry.sh up >"$registry_env"
# shellcheck disable=SC1090
source "$registry_env"
rm -f "$registry_env"

# Unit tests that also run against the real broker's secure listeners when
# its settings are set (they skip in the unit step above, before it is up).
# TestRealBrokerUncleanElection also starts a cluster of its own (one
# controller, two brokers, from the same jars) on KAFKA_CLUSTER_PORT and the
# two ports after it, to run an unclean leader election under a table.
step "real-broker tests (-run RealBroker)"
KAFKA_JARS="$(tools/kafka.sh jars)" KAFKA_CLUSTER_PORT="${KAFKA_CLUSTER_PORT:-19700}" \
  go test -count=1 -run RealBroker ./agent/...

# The 300-member membership simulation on the real broker's coordinator,
# alone: beside the real-broker tests above it slowed the broker enough to
# fail them.
step "membership simulation on the real broker (300 members, -run TestSimulationOnBroker)"
go test -count=1 -run TestSimulationOnBroker ./agent/internal/membership/

# The S3-compatible server (SeaweedFS) the end-to-end tests keep tables on;
# its client settings (AWS_ENDPOINT_URL, keys, region) go to the tests.
step "s3 up"
s3_started=1
export S3_PORT="${S3_PORT:-18333}" TRIBUTARY_S3_BUCKET=tributary-e2e
s3_env="$(mktemp)"
S3_BUCKETS=$TRIBUTARY_S3_BUCKET tools/s3.sh up >"$s3_env"
# shellcheck disable=SC1090
source "$s3_env"
rm -f "$s3_env"

# The GCS and Azure Blob Storage emulators (fake-gcs-server, Azurite), for
# the same tests on the other two object stores: STORAGE_EMULATOR_HOST and
# the AZURE_STORAGE_ settings go to the tests.
step "gcs and azure emulators up"
gcs_started=1 azure_started=1
export GCS_PORT="${GCS_PORT:-18350}" TRIBUTARY_GCS_BUCKET=tributary-e2e
export AZURE_PORT="${AZURE_PORT:-18351}" TRIBUTARY_AZURE_CONTAINER=tributary-e2e
emu_env="$(mktemp)"
GCS_BUCKETS=$TRIBUTARY_GCS_BUCKET tools/gcs.sh up >"$emu_env"
AZURE_CONTAINERS=$TRIBUTARY_AZURE_CONTAINER tools/azure.sh up >>"$emu_env"
# shellcheck disable=SC1090
source "$emu_env"
rm -f "$emu_env"

# The Iceberg REST catalog reference server (tools/iceberg.sh) the Iceberg
# mirrors of Delta tables are committed to; ICEBERG_REST_URI and
# ICEBERG_SPARK_JAR go to the tests, which skip without them (in the unit
# step above).
step "iceberg REST catalog up"
iceberg_started=1
iceberg_env="$(mktemp)"
tools/iceberg.sh up >"$iceberg_env"
# shellcheck disable=SC1090
source "$iceberg_env"
rm -f "$iceberg_env"
# Iceberg's Spark runtime, for Spark's read of the mirrors.
ICEBERG_SPARK_JAR="$(tools/iceberg.sh spark-jar)"
export ICEBERG_REST_URI ICEBERG_SPARK_JAR

step "iceberg mirrors in the REST catalog, read by pyiceberg, DuckDB and Spark (mirror package)"
go test -count=1 ./agent/internal/mirror/

# A Hive Metastore (tools/hms.sh) Delta tables are registered in by name,
# which Spark then reads them by: HIVE_METASTORE_URI goes to the tests.
step "hive metastore up; tables registered by name, read by Spark (hivemeta package)"
hms_started=1
HIVE_METASTORE_URI="$(tools/hms.sh up)"
export HIVE_METASTORE_URI
go test -count=1 ./agent/internal/hivemeta/

# Table maintenance at length, which -short skips in the unit step: a
# simulated day of flushes compacted as it is ingested (read back by
# delta-rs, DuckDB and Spark), and a compaction beside Spark's OPTIMIZE.
step "table maintenance (a simulated day; compaction beside Spark's OPTIMIZE)"
go test -count=1 -run 'TestSimulatedDay|TestRunBesideSparkOptimize' ./agent/internal/maintenance/ ./agent/internal/compaction/

# The table package's store tests, the store contract and the buckets
# the tables' stores share, and the cluster's shared state on the three
# servers (they skip in the unit step above, before they are up).
# The storage package's race of eight creators of a name takes over 20 s
# a server (SeaweedFS answers the losers slowly): it runs on the in-memory
# bucket only, and the end-to-end races cover the servers.
step "object store tests (table and store packages -run 'TestBlobStore|TestShared', storage -run 'TestBlobStoreSharedBucket|TestBlobStoreMultipartCreate|TestBlobStoreCredentialsFixed|TestContract')"
go test -count=1 -run 'TestBlobStore|TestShared' ./agent/internal/table/ ./agent/internal/store/
go test -count=1 -run 'TestBlobStoreSharedBucket|TestBlobStoreMultipartCreate|TestBlobStoreCredentialsFixed|TestContract' ./agent/internal/table/storage/

# Two managers sharing a pipeline's partitions, as a cluster's agents do,
# write one table on the S3-compatible server (a local table takes one
# writer): they skip in the real-broker step above, before it is up.
step "cluster tests on the real broker and the S3-compatible server (pipeline package, -run TestRealBrokerCluster)"
go test -count=1 -run TestRealBrokerCluster ./agent/internal/pipeline/

if has_pkgs ./provider/...; then
  # The acceptance tests run in parallel (resource.ParallelTest) on one
  # agent that the test binary starts, each with names of its own; most of
  # their time is spent waiting on terraform and the agent, so four run at
  # once on two cores. The Terraform and the OpenTofu passes run at the same
  # time, each with an agent of its own, from one build of the test binary
  # and of the agent (TRIBUTARY_TEST_AGENT); their output follows, one pass
  # after the other.
  step "acceptance tests (terraform $(terraform version | head -n1); opentofu $(tofu version | head -n1); at the same time)"
  acc_dir="$(mktemp -d)"
  go test -c -o "$acc_dir/provider.test" ./provider
  go build -o "$acc_dir/tributary-agent" ./agent/cmd/tributary-agent
  # acc_pass NAME CLI [VAR=VALUE...]: one pass with the CLI of .tools/bin,
  # its output to $acc_dir/NAME.log.
  acc_pass() {
    local name=$1 cli=$2 start=$SECONDS rc=0
    shift 2
    (cd provider && env TF_ACC=1 TF_ACC_TERRAFORM_PATH="$ROOT/.tools/bin/$cli" TRIBUTARY_TEST_AGENT="$acc_dir/tributary-agent" "$@" \
      "$acc_dir/provider.test" -test.count=1 -test.timeout 30m -test.parallel 4) >"$acc_dir/$name.log" 2>&1 || rc=$?
    echo "--- acceptance tests under $name: exit code $rc after $((SECONDS - start))s" >>"$acc_dir/$name.log"
    return "$rc"
  }
  acc_pass terraform terraform &
  tf_pid=$!
  acc_pass opentofu tofu TF_ACC_PROVIDER_NAMESPACE=hashicorp TF_ACC_PROVIDER_HOST=registry.opentofu.org &
  tofu_pid=$!
  tf_rc=0 tofu_rc=0
  wait "$tf_pid" || tf_rc=$?
  wait "$tofu_pid" || tofu_rc=$?
  cat "$acc_dir/terraform.log" "$acc_dir/opentofu.log"
  rm -rf "$acc_dir"
  if (( tf_rc != 0 )); then exit "$tf_rc"; fi
  if (( tofu_rc != 0 )); then exit "$tofu_rc"; fi
else
  step "acceptance tests: skipped, no packages under ./provider yet"
fi

# End-to-end tests: packages built with the e2e tag in these directories.
e2e=()
for d in ${E2E_DIRS:-./e2e ./agent/e2e}; do
  [[ -d "$d" ]] && e2e+=("$d/...")
done
if (( ${#e2e[@]} )) && has_pkgs -tags e2e "${e2e[@]}"; then
  step "end-to-end tests (${e2e[*]})"
  # The tests run in parallel (t.Parallel; each runs its own agents on
  # topics, groups and tables of its own names) and mostly wait on Kafka,
  # the agents, flush intervals and terraform: the tier takes about 4
  # CPU-minutes (the broker's included), and took 11 minutes run one test
  # at a time. Six at a time finished in 3 minutes on two cores that other
  # builds kept busy too, as fast as eight and faster than four (4.6).
  go test -count=1 -timeout 30m -parallel 6 -tags e2e "${e2e[@]}"
else
  step "end-to-end tests: skipped, no e2e packages yet"
fi

step "API fuzzing (schemathesis against a running agent: no 5xx, no crash)"
tools/fuzz.sh

# helm lint and helm template of the chart with its ci/ value files, and
# the values it must refuse (the Go test of deploy/helm, in the unit step,
# decodes what it renders and runs the agent with it).
step "helm chart (tools/chart.sh: lint, template, refused values)"
tools/chart.sh

if [[ -f main.go ]]; then
  step "docs up to date"
  make --no-print-directory docs
  if [[ -n "$(git status --porcelain -- docs/)" ]]; then
    git status --short -- docs/
    git --no-pager diff -- docs/
    echo "docs/ is stale: run 'make docs' and commit the result" >&2
    exit 1
  fi
else
  step "docs check: skipped, no provider main.go at the root yet"
fi

end_step
passed=1
