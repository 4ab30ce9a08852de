{{/* The chart's name, or nameOverride. */}}
{{- define "callbus.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: fullnameOverride, or <release>-<chart> (just <release> when it holds the chart's name). */}}
{{- define "callbus.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "callbus.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "callbus.selectorLabels" -}}
app.kubernetes.io/name: {{ include "callbus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: poller
{{- end }}

{{/*
The pods' labels: the selector's and the other app.kubernetes.io/* labels, but not
helm.sh/chart, so that a chart version alone does not change the pod template (which
would roll every pod and move the accounts' leaders for nothing).
*/}}
{{- define "callbus.podLabels" -}}
{{ include "callbus.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: callbus
{{- end }}

{{/* The labels of every object but the pods: the pods' and the chart's version. */}}
{{- define "callbus.labels" -}}
helm.sh/chart: {{ include "callbus.chart" . }}
{{ include "callbus.podLabels" . }}
{{- end }}

{{- define "callbus.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "callbus.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "callbus.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* Where the secure settings are mounted, one file per iparams key. */}}
{{- define "callbus.secretsDir" -}}/var/run/secrets/callbus{{- end }}

{{/* The port of /healthz, /readyz and /metrics: CALLBUS_HTTP_ADDR is ":" and this. */}}
{{- define "callbus.httpPort" -}}8081{{- end }}

{{/*
The Secret holding the secure settings: existingSecret.name, or the one the chart
creates. Empty when there is none.
*/}}
{{- define "callbus.secretName" -}}
{{- if .Values.existingSecret.name }}
{{- .Values.existingSecret.name }}
{{- else if include "callbus.secretKeys" . | fromJson }}
{{- include "callbus.fullname" . }}
{{- end }}
{{- end }}

{{/*
The secure settings available, as JSON: iparams key -> key in the Secret. With
existingSecret, its non-empty key mappings; otherwise each non-empty value of
`secret` under its own key. Use with `include … | fromJson`.
*/}}
{{- define "callbus.secretKeys" -}}
{{- $keys := dict }}
{{- if .Values.existingSecret.name }}
{{- range $key, $secretKey := .Values.existingSecret.keys }}
{{- if $secretKey }}{{ $_ := set $keys $key $secretKey }}{{ end }}
{{- end }}
{{- else }}
{{- range $key, $value := .Values.secret }}
{{- if $value }}{{ $_ := set $keys $key $key }}{{ end }}
{{- end }}
{{- end }}
{{- toJson $keys }}
{{- end }}

{{/*
A config value as an environment string: lists joined with commas, numbers as
integers (YAML numbers arrive as float64, which would print as 1e+06), the rest as is.
*/}}
{{- define "callbus.envValue" -}}
{{- if kindIs "slice" . }}
{{- join "," . }}
{{- else if kindIs "float64" . }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/* shutdown_timeout_seconds in force: the configured one or the declared default. */}}
{{- define "callbus.shutdownTimeout" -}}
{{- $t := index .Values.config "shutdown_timeout_seconds" }}
{{- if kindIs "invalid" $t }}20{{ else }}{{ int64 $t }}{{ end }}
{{- end }}

{{/* The grace period: the value, checked against the shutdown timeout, or that timeout + 10. */}}
{{- define "callbus.terminationGracePeriod" -}}
{{- $shutdown := include "callbus.shutdownTimeout" . | int64 }}
{{- $grace := .Values.terminationGracePeriodSeconds }}
{{- if kindIs "invalid" $grace }}
{{- add $shutdown 10 }}
{{- else if le (int64 $grace) $shutdown }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed config.shutdown_timeout_seconds (%d): Kubernetes would kill the poller before it has drained the outbox and released its lease" (int64 $grace) $shutdown) }}
{{- else }}
{{- int64 $grace }}
{{- end }}
{{- end }}

{{/* Checks between values that the schema cannot express with a clear message. */}}
{{- define "callbus.validate" -}}
{{- if .Values.existingSecret.name }}
{{- range $key, $value := .Values.secret }}
{{- if $value }}
{{- fail (printf "secret.%s and existingSecret.name are both set: give the secure settings in one place" $key) }}
{{- end }}
{{- end }}
{{- if not (or .Values.existingSecret.keys.api_key (include "callbus.fleet" .)) }}
{{- fail "existingSecret.keys.api_key is empty: name the key of the existing Secret that holds the API key" }}
{{- end }}
{{- end }}
{{- if and .Values.nats.credsSecret.name .Values.config.nats_creds }}
{{- fail "nats.credsSecret.name and config.nats_creds are both set: the chart mounts the .creds file and sets nats_creds itself" }}
{{- end }}
{{- if and .Values.nats.tlsCASecret.name .Values.config.nats_tls_ca }}
{{- fail "nats.tlsCASecret.name and config.nats_tls_ca are both set: the chart mounts the CA certificate and sets nats_tls_ca itself" }}
{{- end }}
{{- end }}

{{/* Where the NATS .creds file and CA certificate of `nats` are mounted. */}}
{{- define "callbus.natsDir" -}}/var/run/secrets/callbus-nats{{- end }}

{{/* The volume of the NATS files from `nats.credsSecret` and `nats.tlsCASecret`, if any. */}}
{{- define "callbus.natsVolume" -}}
{{- $n := .Values.nats }}
{{- if or $n.credsSecret.name $n.tlsCASecret.name }}
- name: nats
  projected:
    defaultMode: 0440
    sources:
      {{- with $n.credsSecret.name }}
      - secret:
          name: {{ . }}
          items:
            - key: {{ $n.credsSecret.key | quote }}
              path: nats.creds
      {{- end }}
      {{- with $n.tlsCASecret.name }}
      - secret:
          name: {{ . }}
          items:
            - key: {{ $n.tlsCASecret.key | quote }}
              path: ca.crt
      {{- end }}
{{- end }}
{{- end }}

{{/*
topologySpreadConstraints as given, each without a labelSelector given the pods'
selector labels, and matchLabelKeys pod-template-hash (unless set), so that during a
rollout the new pods are spread among themselves.
*/}}
{{- define "callbus.topologySpread" -}}
{{- $selector := include "callbus.selectorLabels" . | fromYaml }}
{{- $out := list }}
{{- range .Values.topologySpreadConstraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $selector) }}
{{- end }}
{{- if not (hasKey $c "matchLabelKeys") }}
{{- $_ := set $c "matchLabelKeys" (list "pod-template-hash") }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/* The `helm test` pod's labels: the release's, another component than the poller's. */}}
{{- define "callbus.testLabels" -}}
app.kubernetes.io/name: {{ include "callbus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
{{- end }}
