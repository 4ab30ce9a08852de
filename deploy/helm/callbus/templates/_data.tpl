{{/*
The data of the chart's ConfigMap and Secret, apart from their metadata: the pod
template's checksums hash these alone, so that a new chart version, which changes
the objects' labels only, does not roll the pods.
*/}}

{{/* The ConfigMap's data: CALLBUS_<KEY> per `config` entry, or {} when there is none. */}}
{{- define "callbus.configData" -}}
{{- $data := dict }}
{{- range $key, $value := .Values.config }}
{{- if not (kindIs "invalid" $value) }}
{{- $_ := set $data (printf "CALLBUS_%s" (upper $key)) (include "callbus.envValue" $value) }}
{{- end }}
{{- end }}
{{- if $data }}
{{- range $key, $value := $data }}
{{ $key }}: {{ $value | quote }}
{{- end }}
{{- else }}{}
{{- end }}
{{- end }}

{{/* The Secret's data: each non-empty value of `secret`, base64, under its own key. */}}
{{- define "callbus.secretData" -}}
{{- range $key, $value := .Values.secret }}
{{- if $value }}
{{ $key }}: {{ $value | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}
