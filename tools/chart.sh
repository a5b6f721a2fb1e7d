#!/usr/bin/env bash
# Checks the Helm chart deploy/helm/tributary-agent with the helm of
# tools/tools.sh: `helm lint --strict` and `helm template` with each value
# file of its ci/ folder (helm's convention: the smallest install, a cluster
# of three on S3 with TLS, IRSA, a ServiceMonitor and a NetworkPolicy, an
# existing Secret, a memory limit written as a number of bytes), then the
# values it must refuse, each with the message that names the value. The Go test deploy/helm/chart_test.go decodes the
# rendered manifests into the Kubernetes API types and runs the agent with
# the rendered arguments.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

helm="${HELM:-$TRIBUTARY_TOOLS/bin/helm}"
[[ -x "$helm" ]] || die "no helm at $helm: run tools/tools.sh helm"
chart="$TRIBUTARY_REPO/deploy/helm/tributary-agent"
minimal="$chart/ci/default-values.yaml"

for values in "$chart"/ci/*-values.yaml; do
  name="$(basename "$values")"
  out="$("$helm" lint --strict "$chart" -f "$values" 2>&1)" || { echo "$out" >&2; die "helm lint --strict with ci/$name failed"; }
  out="$("$helm" template tributary "$chart" --namespace ingest -f "$values" 2>&1)" ||
    { echo "$out" >&2; die "helm template with ci/$name failed"; }
  log "ci/$name: lint and template pass"
done

# refuse WANT ARGS...: helm template with ARGS fails, saying WANT.
refuse() {
  local want="$1" out
  shift
  if out="$("$helm" template tributary "$chart" --namespace ingest "$@" 2>&1)"; then
    die "helm template $* rendered; want a failure saying: $want"
  fi
  grep -qF -- "$want" <<<"$out" || { echo "$out" >&2; die "helm template $* failed without saying: $want"; }
  local args="$*"
  args="${args//$chart\//}"
  log "refused as it should: ${args:-(no values)}"
}
refuse "auth.token is required"
refuse "auth.secretsKey is required" --set auth.token=0123456789abcdef0123456789abcdef
refuse "auth.token must be one token of at least 32 characters" -f "$minimal" --set auth.token=short
refuse "at '/replicas': got string, want integer" -f "$minimal" --set replicas=three
refuse "additional properties 'replica' not allowed" -f "$minimal" --set replica=3
refuse "at '/logLevel'" -f "$minimal" --set logLevel=verbose
refuse "at '/shutdownTimeout': got number, want string" -f "$minimal" --set shutdownTimeout=30
refuse "replicas is 3 but cluster.name is empty" -f "$minimal" --set replicas=3
refuse "warehouse \"/data/tables\" is not an object store URL" -f "$minimal" --set replicas=3 --set cluster.name=ingest \
  --set warehouse=/data/tables
refuse "tls.enabled is true but tls.secretName is empty" -f "$minimal" --set tls.enabled=true
refuse "below the agent's minimum of 32Mi" -f "$minimal" --set resources.limits.memory=16Mi
refuse "podSecurityContext.fsGroup is unset" -f "$minimal" --set podSecurityContext.fsGroup=null
refuse "shutdownTimeout \"0s\" is zero" -f "$minimal" --set shutdownTimeout=0s
refuse "at '/tls/secretName'" -f "$minimal" --set tls.enabled=true --set 'tls.secretName=a: b'
refuse "at '/serviceMonitor/tokenSecret/key'" -f "$minimal" --set serviceMonitor.enabled=true --set 'serviceMonitor.tokenSecret.key=a b'
log "chart checks passed"
