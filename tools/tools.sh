#!/usr/bin/env bash
# Installs the project's tools into .tools/ (git-ignored), building or
# fetching each one once into the per-user cache ($TRIBUTARY_CACHE, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/tributary) and linking it from there:
#   .tools/bin/terraform     Terraform CLI   (go install, ~2 min cold)
#   .tools/bin/tofu          OpenTofu CLI    (go build, ~2.5 min cold)
#   .tools/bin/weed          SeaweedFS, the S3-compatible server of
#                            tools/s3.sh (go build, ~16 min cold on 2 cores:
#                            a 230 MB binary with ~2 GB of modules)
#   .tools/bin/fake-gcs-server  fake-gcs-server, the GCS emulator of
#                            tools/gcs.sh (go install; 1m44s of CPU, 13 min
#                            measured on a machine loaded ~30 deep; 19 s
#                            with the Go module cache warm)
#   .tools/bin/golangci-lint golangci-lint, the linter of `make lint`
#                            (go install, 3.4 min cold with the Go module
#                            cache empty, on 2 cores shared with other
#                            builds: 2 min of CPU)
#   .tools/bin/helm          Helm 3, the chart checks of tools/chart.sh
#                            (go install; 2m11s cold with the Go module and
#                            build caches empty, 115 s of CPU; 61 MB)
#   .tools/terraform-providers/helm
#                            the hashicorp/helm Terraform provider, for
#                            `terraform validate` of examples/deploy with a
#                            dev_overrides CLI config (go build, 4.8 min cold
#                            with the Go caches empty, on 2 cores shared with
#                            other builds; see build_helm_provider)
#   .tools/azurite           Azurite, the Azure Blob Storage emulator of
#                            tools/azure.sh (npm install, run with node;
#                            37 s of CPU, 10 min measured on that loaded
#                            machine, mostly waiting; 186 MB)
#   .tools/py -> venv        pyarrow, duckdb, deltalake, confluent-kafka
#                            with its Avro and Protobuf schema-registry
#                            serializers (tools/produce_sr.py)
#   .tools/spark             PySpark and delta-spark (python/, pip --target,
#                            used on PYTHONPATH with .tools/py) and the Delta
#                            jars (jars/, Maven: tools/spark/pom.xml)
#   Kafka broker jars        (resolved by tools/kafka.sh on first `up`, or
#                             here with `tools/tools.sh kafka`)
# The docs generator, tfplugindocs, is a tool of the Go module (`go tool
# tfplugindocs`, version pinned in go.mod).
# Usage: tools/tools.sh [terraform|tofu|s3|gcs|azure|lint|helm|helm-provider|py|spark|kafka ...]
#   (default: all but kafka)
# Idempotent; a warm run takes well under a second.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TERRAFORM_VERSION=1.5.7
TOFU_VERSION=1.12.6
# SeaweedFS has no tagged Go module versions; this pseudo-version is its
# 4.53 source (commit 7506e5f91cd6, 2026-11-09). Apache-2.0.
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6
SEAWEEDFS_COMMIT=7506e5f91cd6
# fake-gcs-server (Go module, BSD-2-Clause) and Azurite (npm, MIT). Azurite
# 3.36 and later want Node 22; 3.35.0 is the last that runs on Node 20.
FAKE_GCS_VERSION=v1.56.1
AZURITE_VERSION=3.35.0
# golangci-lint v2 (GPL-3.0, a build tool only; nothing of it is linked
# into the provider or the agent). Its config is .golangci.yml.
GOLANGCI_LINT_VERSION=v2.15.0
# Helm (Apache-2.0), for `helm lint` and `helm template` of the chart under
# deploy/helm. Helm 3 rather than 4: cold, Helm 3.22.0 took 115 s of CPU
# (2m11s) and Helm 4.3.1 175 s (6m06s, on a busier machine); a chart of
# apiVersion v2 installs with both.
HELM_VERSION=3.22.0
# The hashicorp/helm Terraform provider (MPL-2.0). 1.3.2 is the only version
# the Go module proxy serves: the provider's later tags (2.x, 3.x) keep the
# module path without a /v2 or /v3 suffix, which the module system refuses.
# Its helm_release and kubernetes blocks are those of 2.x, the version
# examples/deploy is written for.
HELM_PROVIDER_VERSION=1.3.2
# 1.3.2's kubectl dependency imports vbom.ml/util/sortorder, a module the
# proxy does not serve; its author moved the package to
# github.com/fvbommel/sortorder (MIT), whose 1.0.1 has the one function
# kubectl calls (NaturalLess).
SORTORDER_VERSION=v1.0.1

# Go tool builds must not pick up the project's GOFLAGS / go.work.
go_env() { env GOFLAGS="${GO_TOOL_FLAGS:-}" GOWORK=off CGO_ENABLED=0 "$@"; }

# module_dir DIR MODULE@VERSION: downloads the module (from DIR, outside any
# module) and prints its folder in the read-only module cache.
module_dir() {
  (cd "$1" && go_env go mod download -json "$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
}

build_terraform() { # DIR
  cd "$1"
  GOBIN="$1" go_env go install -trimpath "github.com/hashicorp/terraform@v$TERRAFORM_VERSION"
  "$1/terraform" version
}

build_tofu() { # DIR
  local mod
  mod="$(module_dir "$1" "github.com/opentofu/opentofu@v$TOFU_VERSION")"
  [[ -d "$mod" ]] || { echo "module dir not found"; return 1; }
  # The module cache is read-only; build in a writable copy.
  cp -r "$mod" "$1/src"
  chmod -R u+w "$1/src"
  (cd "$1/src" && GO_TOOL_FLAGS=-mod=mod go_env go build -trimpath \
    -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
    -o "$1/tofu" ./cmd/tofu)
  rm -rf "$1/src"
  "$1/tofu" version
}

# `go install weed@version` refuses the module: its go.mod has a replace
# directive. So build inside the downloaded module, as the main module (its
# replace applies and its go.sum is complete, so the read-only module cache
# is never written).
build_seaweedfs() { # DIR
  local mod
  mod="$(module_dir "$1" "github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION")"
  [[ -f "$mod/weed/weed.go" ]] || { echo "module dir not found"; return 1; }
  (cd "$mod" && go_env go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/seaweedfs/seaweedfs/weed/util/version.COMMIT=$SEAWEEDFS_COMMIT" \
    -o "$1/weed" ./weed)
  "$1/weed" version
}

build_gcs() { # DIR
  cd "$1"
  GOBIN="$1" go_env go install -trimpath -ldflags "-s -w" "github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION"
  local usage
  usage="$("$1/fake-gcs-server" -help 2>&1 || true)" # -help exits 2
  [[ "$usage" == *-backend* ]]
}

# Built with the Go toolchain that builds the project, so it reads the
# project's go.mod (go version) as the compiler does.
build_lint() { # DIR
  cd "$1"
  GOBIN="$1" go_env go install -trimpath -ldflags "-s -w" \
    "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
  "$1/golangci-lint" version
}

# -X sets what `helm version` prints, as Helm's own release builds do.
build_helm() { # DIR
  cd "$1"
  GOBIN="$1" go_env go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION" \
    "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION"
  "$1/helm" version
}

# Built inside a writable copy of the downloaded module, as the main module
# (its go.mod has a replace directive, which `go install` refuses), with
# vbom.ml/util replaced by a local module holding fvbommel/sortorder's file.
# -mod=mod lets go complete the 2020 go.sum for the replacement.
build_helm_provider() { # DIR
  local mod sortorder
  mod="$(module_dir "$1" "github.com/hashicorp/terraform-provider-helm@v$HELM_PROVIDER_VERSION")"
  sortorder="$(module_dir "$1" "github.com/fvbommel/sortorder@$SORTORDER_VERSION")"
  [[ -f "$mod/main.go" && -f "$sortorder/natsort.go" ]] || { echo "module dir not found"; return 1; }
  cp -r "$mod" "$1/src"
  mkdir -p "$1/vbom/sortorder"
  cp "$sortorder/natsort.go" "$sortorder/LICENSE" "$1/vbom/sortorder/"
  printf 'module vbom.ml/util\n\ngo 1.14\n' >"$1/vbom/go.mod"
  chmod -R u+w "$1/src" "$1/vbom"
  (cd "$1/src" && go_env go mod edit -replace vbom.ml/util=../vbom &&
    GO_TOOL_FLAGS=-mod=mod go_env go build -trimpath -ldflags "-s -w" -o "$1/terraform-provider-helm" .)
  rm -rf "$1/src" "$1/vbom"
  # Run alone, a provider says it is a plugin and exits 1.
  grep -q 'is a plugin' <<<"$("$1/terraform-provider-helm" 2>&1 || true)"
}

# Azurite's blob service alone is what the tests use, but the package is
# one; its dependencies resolve as npm resolves them under the pinned
# version. No audit or funding calls, no lock file kept.
build_azure() { # DIR
  command -v node >/dev/null || { echo "node not found"; return 1; }
  npm install --prefix "$1" --no-audit --no-fund --no-save --omit=dev --loglevel=error "azurite@$AZURITE_VERSION"
  node "$1/node_modules/azurite/dist/src/blob/main.js" --version
}

link() { # TARGET LINKNAME
  mkdir -p "$(dirname "$2")"
  [[ "$(readlink "$2" 2>/dev/null)" == "$1" ]] || ln -sfn "$1" "$2"
}

do_terraform() {
  cache_build "terraform-$TERRAFORM_VERSION" build_terraform
  link "$TRIBUTARY_CACHE/terraform-$TERRAFORM_VERSION/terraform" "$TRIBUTARY_TOOLS/bin/terraform"
}
do_tofu() {
  cache_build "tofu-$TOFU_VERSION" build_tofu
  link "$TRIBUTARY_CACHE/tofu-$TOFU_VERSION/tofu" "$TRIBUTARY_TOOLS/bin/tofu"
}
do_s3() {
  cache_build "seaweedfs-$SEAWEEDFS_VERSION" build_seaweedfs
  link "$TRIBUTARY_CACHE/seaweedfs-$SEAWEEDFS_VERSION/weed" "$TRIBUTARY_TOOLS/bin/weed"
}
do_gcs() {
  cache_build "fake-gcs-server-$FAKE_GCS_VERSION" build_gcs
  link "$TRIBUTARY_CACHE/fake-gcs-server-$FAKE_GCS_VERSION/fake-gcs-server" "$TRIBUTARY_TOOLS/bin/fake-gcs-server"
}
do_lint() {
  cache_build "golangci-lint-$GOLANGCI_LINT_VERSION" build_lint
  link "$TRIBUTARY_CACHE/golangci-lint-$GOLANGCI_LINT_VERSION/golangci-lint" "$TRIBUTARY_TOOLS/bin/golangci-lint"
}
do_helm() {
  cache_build "helm-$HELM_VERSION" build_helm
  link "$TRIBUTARY_CACHE/helm-$HELM_VERSION/helm" "$TRIBUTARY_TOOLS/bin/helm"
}
do_helm_provider() {
  cache_build "terraform-provider-helm-$HELM_PROVIDER_VERSION" build_helm_provider
  link "$TRIBUTARY_CACHE/terraform-provider-helm-$HELM_PROVIDER_VERSION" "$TRIBUTARY_TOOLS/terraform-providers/helm"
}
do_azure() {
  cache_build "azurite-$AZURITE_VERSION" build_azure
  link "$TRIBUTARY_CACHE/azurite-$AZURITE_VERSION" "$TRIBUTARY_TOOLS/azurite"
}
# A venv is not relocatable, so it is built in place at its final path and
# marked complete with a stamp file; the key hashes requirements.txt and the
# interpreter version, so editing the pins gives a new venv.
do_py() {
  local py="${PYTHON:-}"
  if [[ -z "$py" ]]; then
    for c in python3.11 python3; do command -v "$c" >/dev/null && { py="$c"; break; }; done
  fi
  [[ -n "$py" ]] || die "no python3 found (set PYTHON=...)"
  local req="$TRIBUTARY_REPO/tools/requirements.txt" pyver hash key dir
  pyver="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  hash="$(cat "$req" | sha256sum | cut -c1-12)"
  key="py$pyver-$hash"
  dir="$TRIBUTARY_CACHE/$key"
  if [[ ! -f "$dir/.complete" ]]; then
    mkdir -p "$TRIBUTARY_CACHE/.logs"
    (
      exec 9>"$TRIBUTARY_CACHE/.$key.lock"
      flock 9
      [[ -f "$dir/.complete" ]] && exit 0
      log "building venv $key (log: $TRIBUTARY_CACHE/.logs/$key.log)"
      start=$SECONDS
      rm -rf "$dir"
      if ! { "$py" -m venv "$dir" &&
             "$dir/bin/python" -m pip install --disable-pip-version-check -q \
               --only-binary=:all: -r "$req" &&
             "$dir/bin/python" -c 'import pyarrow, duckdb, deltalake, confluent_kafka, pyiceberg
import confluent_kafka.schema_registry.avro, confluent_kafka.schema_registry.protobuf'
           } >"$TRIBUTARY_CACHE/.logs/$key.log" 2>&1; then
        tail -n 30 "$TRIBUTARY_CACHE/.logs/$key.log" >&2
        rm -rf "$dir"
        die "venv $key failed"
      fi
      touch "$dir/.complete"
      log "built venv $key in $((SECONDS - start))s"
    )
  fi
  link "$dir" "$TRIBUTARY_TOOLS/py"
}

# Spark for the end-to-end tests: pyspark (an sdist of pure Python that
# carries Spark's jars) and delta-spark installed with pip --target, and the
# Delta jars copied by Maven. Pure Python, so the folder is relocatable and
# built with cache_build; the key hashes the pins and the pom.
SPARK_REQ="$TRIBUTARY_REPO/tools/spark/requirements.txt"
SPARK_POM="$TRIBUTARY_REPO/tools/spark/pom.xml"

build_spark() { # DIR
  command -v mvn >/dev/null || { echo "mvn not found"; return 1; }
  command -v java >/dev/null || { echo "java not found (Spark 4 needs Java 17)"; return 1; }
  local py="${PYTHON:-python3}"
  mvn -B -q -f "$SPARK_POM" dependency:copy-dependencies -DoutputDirectory="$1/jars"
  "$py" -m pip install --disable-pip-version-check -q --no-deps --no-compile \
    --target "$1/python" -r "$SPARK_REQ"
  PYTHONPATH="$1/python" "$py" -c 'import pyspark, delta, py4j; print("pyspark", pyspark.__version__)'
  ls "$1/jars"
  compgen -G "$1/jars/delta-spark_*.jar" >/dev/null
}
do_spark() {
  local key
  key="spark-$(cat "$SPARK_REQ" "$SPARK_POM" | sha256sum | cut -c1-12)"
  cache_build "$key" build_spark
  link "$TRIBUTARY_CACHE/$key" "$TRIBUTARY_TOOLS/spark"
}

do_kafka() { "$TRIBUTARY_REPO/tools/kafka.sh" jars >/dev/null; }

main() {
  local what=("$@")
  (( ${#what[@]} )) || what=(s3 terraform tofu gcs azure lint helm helm-provider py spark)
  mkdir -p "$TRIBUTARY_CACHE" "$TRIBUTARY_TOOLS/bin"
  # Run in parallel; the Go builds dominate cold (SeaweedFS ~16 min, the
  # Terraform CLIs ~2-3 min each); the emulators finish in its shadow.
  local pids=() names=() rc=0 i
  for w in "${what[@]}"; do
    case "$w" in
      terraform|tofu|s3|gcs|azure|lint|helm|helm-provider|py|spark|kafka) ;;
      *) die "unknown tool: $w" ;;
    esac
    "do_${w//-/_}" & pids+=($!); names+=("$w")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { log "tool ${names[$i]} failed"; rc=1; }
  done
  (( rc == 0 )) || exit "$rc"
  log "tools ready in $TRIBUTARY_TOOLS"
}

main "$@"
