{{/*
GOMEMLIMIT, in bytes: 90% of resources.limits.memory, so that the Go runtime collects
harder before the container reaches its limit and is OOM-killed, leaving 10% for what
the runtime does not count (stacks' slack, the binary's pages). Empty without a
memory limit, or when extraEnv sets GOMEMLIMIT itself. The limit is a Kubernetes quantity: an integer or decimal with an
optional binary (Ki, Mi, Gi, Ti, Pi) or decimal (k, M, G, T, P) suffix, below 1 EB; any
other form (an exponent, milli-bytes) fails the render with the value named.
*/}}
{{- define "callbus.goMemLimit" -}}
{{- $limit := "" }}
{{- if and .Values.resources .Values.resources.limits }}
{{- $raw := .Values.resources.limits.memory }}
{{- /* A YAML number arrives as float64, which toString would write 2.68435456e+08. */}}
{{- if kindIs "float64" $raw }}{{ $limit = printf "%.0f" $raw }}{{ else if $raw }}{{ $limit = toString $raw }}{{ end }}
{{- end }}
{{- range .Values.extraEnv }}{{ if eq .name "GOMEMLIMIT" }}{{ $limit = "" }}{{ end }}{{ end }}
{{- if $limit }}
{{- $m := regexFindAll "^([0-9]+)(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$" $limit 1 }}
{{- if not $m }}
{{- fail (printf "resources.limits.memory %q: write it as a number of bytes or with a suffix Ki, Mi, Gi, Ti (or k, M, G, T), e.g. 512Mi, so that the chart can set GOMEMLIMIT to 90%% of it" $limit) }}
{{- end }}
{{- $number := regexReplaceAll "[A-Za-z]+$" $limit "" }}
{{- $suffix := regexFind "[A-Za-z]+$" $limit }}
{{- $factors := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "Pi" 1125899906842624
  "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "P" 1000000000000000 }}
{{- $factor := index $factors $suffix }}
{{- if ge (mulf (float64 $number) $factor) 1e18 }}
{{- fail (printf "resources.limits.memory %q: too large for GOMEMLIMIT" $limit) }}
{{- end }}
{{- if contains "." $number }}
{{- /* A decimal: Kubernetes rounds the byte count up; then 90% of it, rounded down. */}}
{{- $bytes := ceil (mulf (float64 $number) $factor) }}
{{- printf "%.0f" (floor (divf (mulf $bytes 9) 10)) }}
{{- else }}
{{- div (mul (int64 $number) $factor 9) 10 }}
{{- end }}
{{- end }}
{{- end }}
