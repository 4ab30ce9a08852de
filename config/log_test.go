package config

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// The start-up fields are short: the settings that differ from their defaults,
// named by their variables, in the units the user writes.
func TestLogFieldsShort(t *testing.T) {
	e := minimal.with("CALLBUS_CALLS_INTERVAL_SECONDS", "2", "CALLBUS_STREAM_MAX_AGE_HOURS", "24",
		"CALLBUS_RATE_LIMIT_SHARE", "50", "CALLBUS_RESOURCES", "teams,calls", "CALLBUS_INSTANCE_ID", "poller-0",
		"CALLBUS_NATS_PASSWORD", "pw", "CALLBUS_NATS_USER", "u")
	s, err := Load(e.get, "")
	if err != nil {
		t.Fatal(err)
	}
	got := s.LogFields()
	want := map[string]any{
		"CALLBUS_API_URL": "http://127.0.0.1:8080", "CALLBUS_API_KEY": "[REDACTED]", "CALLBUS_ACCOUNT": "acme",
		"CALLBUS_CALLS_INTERVAL_SECONDS": int64(2), "CALLBUS_STREAM_MAX_AGE_HOURS": int64(24),
		"CALLBUS_RATE_LIMIT_SHARE": int64(50), "CALLBUS_RESOURCES": "calls,teams", "CALLBUS_INSTANCE_ID": "poller-0",
		"CALLBUS_NATS_USER": "u", "CALLBUS_NATS_PASSWORD": "[REDACTED]",
	}
	if !maps.Equal(got, want) {
		t.Errorf("log fields\n got %v\nwant %v", got, want)
	}
}

// Every parameter but api_domain (which only derives api_url) has a log entry.
func TestLoggedCoversEveryParameter(t *testing.T) {
	d, err := Declarations()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, l := range logged {
		keys = append(keys, l.key)
	}
	for _, k := range d.Keys() {
		if k != "api_domain" && !slices.Contains(keys, k) {
			t.Errorf("parameter %s is not in logged", k)
		}
	}
}

// Load's error names each setting as the user gave it, or can give it.
func TestLoadErrorNamesVariables(t *testing.T) {
	keyFile := writeFile(t, "key", "x y")
	values := writeFile(t, "values.json", `{"stream_replicas": 9}`)
	tests := []struct {
		name string
		env  env
		file string
		want []string
		not  []string
	}{
		{"nothing set", env{}, "", []string{
			"3 problems:",
			"CALLBUS_API_KEY: required: set CALLBUS_API_KEY or CALLBUS_API_KEY_FILE",
			"CALLBUS_ACCOUNT: required: set CALLBUS_ACCOUNT or CALLBUS_ACCOUNT_FILE",
			"CALLBUS_API_URL: required unless CALLBUS_API_DOMAIN is set",
		}, []string{"api_key", "account:"}},
		{"a variable", minimal.with("CALLBUS_STREAM_REPLICAS", "0"), "", []string{"CALLBUS_STREAM_REPLICAS: "}, nil},
		{"a _FILE variable", minimal.with("CALLBUS_API_KEY", "", "CALLBUS_API_KEY_FILE", keyFile), "", []string{"CALLBUS_API_KEY_FILE: "}, nil},
		{"the values file", env{}, values, []string{
			"stream_replicas (in values.json): must be at most 5",
			`CALLBUS_API_KEY: required: set CALLBUS_API_KEY, CALLBUS_API_KEY_FILE (a file holding the value) or "api_key" in values.json`,
		}, nil},
		{"a rule between variables", minimal.with("CALLBUS_NATS_USER", "u"), "", []string{"CALLBUS_NATS_PASSWORD: required with CALLBUS_NATS_USER"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.env.get, tt.file)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("error names %q:\n%v", n, err)
				}
			}
		})
	}
}
