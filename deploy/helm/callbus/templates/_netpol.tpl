{{/*
The NetworkPolicy's egress ports, derived from the configured URLs so that a server
on another port is not blocked silently: every port of every NATS URL, Redis URL or
Cluster/Sentinel address, and API URL (the process's and each account's). A port the
chart cannot derive fails the render with the value named.
*/}}

{{/*
The port of a URL: the explicit one, else the scheme's default. Arguments: dict with
url, what (the value, for messages) and defaults (scheme -> port). Fails on a URL
without a scheme, an unknown scheme without a port, or a port out of range.
*/}}
{{- define "callbus.urlPort" -}}
{{- $url := trim .url }}
{{- if not (regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://" $url) }}
{{- fail (printf "networkPolicy: cannot derive a port from %s %q: it has no scheme://" .what $url) }}
{{- end }}
{{- $scheme := lower (regexFind "^[A-Za-z][A-Za-z0-9+.-]*" $url) }}
{{- $authority := regexReplaceAll "[/?#].*$" (regexReplaceAll "^[^:]*://" $url "") "" }}
{{- $hostport := regexReplaceAll "^.*@" $authority "" }}
{{- $port := regexReplaceAll "^(\\[[^]]*\\]|[^:]*)" $hostport "" | trimPrefix ":" }}
{{- if $port }}
{{- include "callbus.checkPort" (dict "port" $port "what" .what "in" $url) }}
{{- else if hasKey .defaults $scheme }}
{{- index .defaults $scheme }}
{{- else }}
{{- fail (printf "networkPolicy: cannot derive a port from %s %q: no port and no default port for %s://; add the port to the URL" .what $url $scheme) }}
{{- end }}
{{- end }}

{{/* The port of a host:port address, which must have one. Arguments: dict with addr and what. */}}
{{- define "callbus.addrPort" -}}
{{- $addr := trim .addr }}
{{- $port := regexReplaceAll "^(\\[[^]]*\\]|[^:]*)" $addr "" | trimPrefix ":" }}
{{- if not $port }}
{{- fail (printf "networkPolicy: cannot derive a port from %s entry %q: write it host:port" .what $addr) }}
{{- end }}
{{- include "callbus.checkPort" (dict "port" $port "what" .what "in" $addr) }}
{{- end }}

{{- define "callbus.checkPort" -}}
{{- if not (regexMatch "^[0-9]{1,5}$" .port) }}
{{- fail (printf "networkPolicy: cannot derive a port from %s %q: %q is not a port number" .what .in .port) }}
{{- end }}
{{- $n := atoi .port }}
{{- if or (lt $n 1) (gt $n 65535) }}
{{- fail (printf "networkPolicy: cannot derive a port from %s %q: %d is not in 1-65535" .what .in $n) }}
{{- end }}
{{- $n }}
{{- end }}

{{/* A comma-separated setting (or a list) as a list of non-empty trimmed items. */}}
{{- define "callbus.items" -}}
{{- $items := list }}
{{- $raw := . }}
{{- if not (kindIs "slice" $raw) }}{{ $raw = splitList "," (toString (default "" $raw)) }}{{ end }}
{{- range $raw }}{{ if trim (toString .) }}{{ $items = append $items (trim (toString .)) }}{{ end }}{{ end }}
{{- toJson (dict "items" $items) }}
{{- end }}

{{/* NATS: every URL of config.nats_url (default nats://127.0.0.1:4222). */}}
{{- define "callbus.natsPorts" -}}
{{- $defaults := dict "nats" "4222" "tls" "4222" "ws" "80" "wss" "443" }}
{{- $ports := list }}
{{- range (include "callbus.items" (.Values.config.nats_url | default "nats://127.0.0.1:4222") | fromJson).items }}
{{- $ports = append $ports (include "callbus.urlPort" (dict "url" . "what" "config.nats_url" "defaults" $defaults)) }}
{{- end }}
{{- toJson (dict "ports" $ports) }}
{{- end }}

{{/*
Redis: the Cluster's seed nodes, or the Sentinels (the primary's port is learnt from
them at run time, so it must be listed in networkPolicy.egress.redis.ports), or the
host of config.redis_url (default redis://127.0.0.1:6379/0).
*/}}
{{- define "callbus.redisPorts" -}}
{{- $cluster := (include "callbus.items" .Values.config.redis_cluster_addrs | fromJson).items }}
{{- $sentinels := (include "callbus.items" .Values.config.redis_sentinel_addrs | fromJson).items }}
{{- $ports := list }}
{{- range $cluster }}
{{- $ports = append $ports (include "callbus.addrPort" (dict "addr" . "what" "config.redis_cluster_addrs")) }}
{{- end }}
{{- range $sentinels }}
{{- $ports = append $ports (include "callbus.addrPort" (dict "addr" . "what" "config.redis_sentinel_addrs")) }}
{{- end }}
{{- if and $sentinels (not .Values.networkPolicy.egress.redis.ports) }}
{{- fail "networkPolicy: cannot derive the port of the Redis primary: the Sentinels (config.redis_sentinel_addrs) name it at run time; list it (and its replicas' ports) in networkPolicy.egress.redis.ports, e.g. [{port: 6379}]" }}
{{- end }}
{{- if not (or $cluster $sentinels) }}
{{- $ports = append $ports (include "callbus.urlPort" (dict "url" (.Values.config.redis_url | default "redis://127.0.0.1:6379/0") "what" "config.redis_url" "defaults" (dict "redis" "6379" "rediss" "6379"))) }}
{{- end }}
{{- toJson (dict "ports" $ports) }}
{{- end }}

{{/*
The call-center API: config.api_url or config.api_domain (https, 443) and each
account's, an account without either using the process's. The accounts of
existingAccountsSecret are unknown to the chart: their ports must be listed in
networkPolicy.egress.api.ports.
*/}}
{{- define "callbus.apiPorts" -}}
{{- $defaults := dict "http" "80" "https" "443" }}
{{- $ports := list }}
{{- $sources := list (dict "values" .Values.config "what" "config.api_url") }}
{{- range $name, $account := .Values.accounts }}
{{- $sources = append $sources (dict "values" ($account | default dict) "what" (printf "accounts.%s.api_url" $name)) }}
{{- end }}
{{- range $sources }}
{{- if .values.api_url }}
{{- $ports = append $ports (include "callbus.urlPort" (dict "url" .values.api_url "what" .what "defaults" $defaults)) }}
{{- else if .values.api_domain }}
{{- $ports = append $ports "443" }}
{{- end }}
{{- end }}
{{- if and .Values.existingAccountsSecret (not .Values.networkPolicy.egress.api.ports) }}
{{- fail "networkPolicy: cannot derive the API ports of the accounts in existingAccountsSecret (the chart does not read that Secret): list them in networkPolicy.egress.api.ports, e.g. [{port: 443}]" }}
{{- end }}
{{- toJson (dict "ports" $ports) }}
{{- end }}

{{/*
One egress rule's ports: the derived ones (TCP), then the ones given in the values
that are not among them. Arguments: dict with derived (list of port strings) and
given (NetworkPolicyPort list).
*/}}
{{- define "callbus.egressPorts" -}}
{{- $seen := dict }}
{{- range $port := .derived | uniq | sortAlpha }}
{{- $_ := set $seen (printf "%s/TCP" $port) true }}
- port: {{ $port }}
  protocol: TCP
{{- end }}
{{- range .given }}
{{- $p := merge (deepCopy .) (dict "protocol" "TCP") }}
{{- $id := printf "%v/%s" $p.port $p.protocol }}
{{- if not (hasKey $seen $id) }}
{{- $_ := set $seen $id true }}
- {{ toYaml $p | nindent 2 | trim }}
{{- end }}
{{- end }}
{{- end }}
