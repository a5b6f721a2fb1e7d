#!/usr/bin/env bash
# Installs the project's tools into .tools/ (git-ignored), building or
# fetching each one once into the per-user cache ($TRIBUTARY_CACHE, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/tributary) and linking it from there:
#   .tools/bin/terraform     Terraform CLI   (go install, ~2 min cold)
#   .tools/bin/tofu          OpenTofu CLI    (go build, ~2.5 min cold)
#   .tools/py -> venv        pyarrow, duckdb, deltalake, confluent-kafka
#   Kafka broker jars        (resolved by tools/kafka.sh on first `up`, or
#                             here with `tools/tools.sh kafka`)
# The docs generator, tfplugindocs, is a tool of the Go module (`go tool
# tfplugindocs`, version pinned in go.mod).
# Usage: tools/tools.sh [terraform|tofu|py|kafka ...]  (default: all but kafka)
# Idempotent; a warm run takes well under a second.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TERRAFORM_VERSION=1.5.7
TOFU_VERSION=1.12.6

# Go tool builds must not pick up the project's GOFLAGS / go.work.
go_env() { env GOFLAGS="${GO_TOOL_FLAGS:-}" GOWORK=off CGO_ENABLED=0 "$@"; }

build_terraform() { # DIR
  cd "$1"
  GOBIN="$1" go_env go install -trimpath "github.com/hashicorp/terraform@v$TERRAFORM_VERSION"
  "$1/terraform" version
}

build_tofu() { # DIR
  local mod
  mod="$(cd "$1" && go_env go mod download -json "github.com/opentofu/opentofu@v$TOFU_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
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
             "$dir/bin/python" -c 'import pyarrow, duckdb, deltalake, confluent_kafka'
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

do_kafka() { "$TRIBUTARY_REPO/tools/kafka.sh" jars >/dev/null; }

main() {
  local what=("$@")
  (( ${#what[@]} )) || what=(terraform tofu py)
  mkdir -p "$TRIBUTARY_CACHE" "$TRIBUTARY_TOOLS/bin"
  # Run in parallel; the two big Go builds dominate (~2-3 min each cold).
  local pids=() names=() rc=0 i
  for w in "${what[@]}"; do
    case "$w" in
      terraform|tofu|py|kafka) ;;
      *) die "unknown tool: $w" ;;
    esac
    "do_$w" & pids+=($!); names+=("$w")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { log "tool ${names[$i]} failed"; rc=1; }
  done
  (( rc == 0 )) || exit "$rc"
  log "tools ready in $TRIBUTARY_TOOLS"
}

main "$@"
