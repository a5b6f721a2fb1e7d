{{/*
The chart's name, or nameOverride.
*/}}
{{- define "tributary-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name: fullnameOverride, or <release>-<name> (the release
alone when it holds the name). At most 52 characters: a StatefulSet's pods
carry a controller-revision-hash label of its name and 11 more characters,
and a label value is at most 63.
*/}}
{{- define "tributary-agent.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Labels of every resource.
*/}}
{{- define "tributary-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tributary-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Labels that select the release's pods.
*/}}
{{- define "tributary-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tributary-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The ServiceAccount the pods run as.
*/}}
{{- define "tributary-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tributary-agent.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The Secret with the keys `tokens` and `secrets.key`: auth.existingSecret, or
the chart's.
*/}}
{{- define "tributary-agent.authSecret" -}}
{{- default (include "tributary-agent.fullname" .) .Values.auth.existingSecret }}
{{- end }}

{{/*
The image: by digest when image.digest is set, else by tag (the appVersion
by default).
*/}}
{{- define "tributary-agent.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The container's memory limit (resources.limits.memory, a Kubernetes
quantity such as 512Mi, 1Gi, 2G or 1.5Gi) in bytes, for --memory-limit;
empty without a limit. The agent's sizes take whole numbers with MiB, Mi,
MB... but not Kubernetes' decimal suffixes (M, G) or fractions, so every
quantity is written in bytes.
*/}}
{{- define "tributary-agent.memoryLimitBytes" -}}
{{- $q := "" }}
{{- with .Values.resources }}{{ with .limits }}{{ with .memory }}
{{- /* A number in a values file arrives as a float64, which toString writes
as 5.36870912e+08: write it as the whole number of bytes it is. */}}
{{- $q = ternary (printf "%.0f" .) (toString .) (kindIs "float64" .) }}
{{- end }}{{ end }}{{ end }}
{{- if $q }}
{{- $suffix := regexFind "[A-Za-z]*$" $q }}
{{- $number := trimSuffix $suffix $q }}
{{- $factors := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 }}
{{- if or (not (hasKey $factors $suffix)) (not (regexMatch "^[0-9]+(\\.[0-9]+)?$" $number)) }}
{{- fail (printf "resources.limits.memory %q: write a Kubernetes quantity such as 512Mi, 1Gi, 1.5Gi or 2G (units k, M, G, T, Ki, Mi, Gi, Ti)" $q) }}
{{- end }}
{{- $bytes := mulf (float64 $number) (index $factors $suffix) | floor | int64 }}
{{- if lt $bytes 33554432 }}
{{- fail (printf "resources.limits.memory %s is below the agent's minimum of 32Mi (its --memory-limit): raise the limit" $q) }}
{{- end }}
{{- $bytes }}
{{- end }}
{{- end }}

{{/*
shutdownTimeout (a duration such as 30s, 2m or 1h30m) in seconds.
*/}}
{{- define "tributary-agent.shutdownSeconds" -}}
{{- $d := toString .Values.shutdownTimeout }}
{{- $h := regexFind "[0-9]+h" $d | trimSuffix "h" | default "0" | int }}
{{- $m := regexFind "[0-9]+m" $d | trimSuffix "m" | default "0" | int }}
{{- $s := regexFind "[0-9]+s" $d | trimSuffix "s" | default "0" | int }}
{{- add (mul $h 3600) (mul $m 60) $s }}
{{- end }}

{{/*
Refuses values that make no working agent or cluster, naming the value and
the fix.
*/}}
{{- define "tributary-agent.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.cluster.name) }}
{{- fail (printf "replicas is %d but cluster.name is empty: agents without a cluster would each read every partition and write the same tables. Set cluster.name (and warehouse to an object store URL), or replicas: 1" (int .Values.replicas)) }}
{{- end }}
{{- if and .Values.cluster.name (not (regexMatch "^(s3|gs|azblob|abfss)://" .Values.warehouse)) }}
{{- fail (printf "cluster.name is set but warehouse %q is not an object store URL: the agents of a cluster share their state and tables there. Set warehouse to s3://bucket/prefix, gs://bucket/prefix, azblob://container/prefix or abfss://container@account.dfs.core.windows.net/prefix" .Values.warehouse) }}
{{- end }}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) }}
{{- fail "tls.enabled is true but tls.secretName is empty: name a kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt), such as a cert-manager Certificate's secretName" }}
{{- end }}
{{- $fsGroup := "" }}
{{- with .Values.podSecurityContext }}{{ $fsGroup = .fsGroup }}{{ end }}
{{- if not $fsGroup }}
{{- fail "podSecurityContext.fsGroup is unset: the Secrets' files are mounted with mode 0400, owned by root, and the kubelet gives the pod's fsGroup read access to them; without it the agent (user 65532) cannot read its token file or secrets key. Set podSecurityContext.fsGroup: 65532 (the chart's default)" }}
{{- end }}
{{- if eq (include "tributary-agent.shutdownSeconds" . | int) 0 }}
{{- fail (printf "shutdownTimeout %q is zero: a stopping agent needs time to flush and commit every table. Give a duration above zero, such as 30s" (toString .Values.shutdownTimeout)) }}
{{- end }}
{{- if and .Values.tls.clientAuth (not .Values.tls.enabled) }}
{{- fail "tls.clientAuth needs tls.enabled: client certificates are checked in the TLS handshake" }}
{{- end }}
{{- end }}
