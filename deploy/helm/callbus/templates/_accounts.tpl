{{/*
A fleet: the accounts this deployment serves, one values file each, <account>.json,
in the directory named by CALLBUS_ACCOUNTS_DIR (accounts_dir). The fleet re-reads
that directory while it runs, so the accounts are not part of the pods' checksums:
adding, changing or removing an account, or rotating its key, does not roll the pods.
*/}}

{{/* "true" when the chart runs a fleet (accounts or existingAccountsSecret), else empty. */}}
{{- define "callbus.fleet" -}}
{{- if or .Values.accounts .Values.existingAccountsSecret }}true{{ end }}
{{- end }}

{{/* Where the accounts directory is mounted. */}}
{{- define "callbus.accountsDir" -}}/var/run/callbus/accounts{{- end }}

{{/* The Secret the chart creates from `accounts`. */}}
{{- define "callbus.accountsSecretName" -}}
{{- printf "%s-accounts" (include "callbus.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The accounts Secret's data: per account, <account>.json (its settings, with
api_key_file naming <account>.key beside it) and, when the key is given in the
values, <account>.key.
*/}}
{{- define "callbus.accountsData" -}}
{{- range $name, $account := .Values.accounts }}
{{- $settings := omit ($account | default dict) "api_key" }}
{{- $_ := set $settings "api_key_file" (printf "%s.key" $name) }}
{{ $name }}.json: {{ toJson $settings | b64enc | quote }}
{{- with ($account | default dict).api_key }}
{{ $name }}.key: {{ . | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Checks of the fleet's values that the schema cannot express with a clear message. */}}
{{- define "callbus.validateFleet" -}}
{{- if and .Values.existingAccountsSecret (or .Values.accounts .Values.accountKeysSecret) }}
{{- fail "existingAccountsSecret and accounts (or accountKeysSecret) are both set: the accounts come from one place" }}
{{- end }}
{{- range $name, $account := .Values.accounts }}
{{- $key := ($account | default dict).api_key }}
{{- if and $key $.Values.accountKeysSecret }}
{{- fail (printf "accounts.%s.api_key and accountKeysSecret are both set: give the account keys in one place (accountKeysSecret holds %s.key)" $name $name) }}
{{- end }}
{{- if not (or $key $.Values.accountKeysSecret) }}
{{- fail (printf "accounts.%s has no API key: set accounts.%s.api_key, or accountKeysSecret (a Secret of yours holding %s.key)" $name $name $name) }}
{{- end }}
{{- end }}
{{- if include "callbus.fleet" . }}
{{- if or .Values.secret.api_key (and .Values.existingSecret.name .Values.existingSecret.keys.api_key) }}
{{- fail "a fleet (accounts or existingAccountsSecret) takes each account's API key from its own file: leave secret.api_key empty and set existingSecret.keys.api_key to \"\"" }}
{{- end }}
{{- end }}
{{- if and .Values.accountKeysSecret (not .Values.accounts) }}
{{- fail "accountKeysSecret is set but accounts is empty: it holds the keys of the accounts listed under accounts" }}
{{- end }}
{{- end }}

{{/* The volume of the accounts directory, when the chart runs a fleet. */}}
{{- define "callbus.accountsVolume" -}}
{{- if .Values.existingAccountsSecret }}
- name: accounts
  secret:
    secretName: {{ .Values.existingAccountsSecret }}
    defaultMode: 0440
{{- else if .Values.accounts }}
- name: accounts
  # One directory of two Secrets: the values files from the chart's, the keys from
  # accountKeysSecret when given. A missing key makes that account's file refused
  # (optional), never the pod unable to start.
  projected:
    defaultMode: 0440
    sources:
      - secret:
          name: {{ include "callbus.accountsSecretName" . }}
      {{- with .Values.accountKeysSecret }}
      - secret:
          name: {{ . }}
          optional: true
      {{- end }}
{{- end }}
{{- end }}
