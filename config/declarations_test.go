package config

import (
	"slices"
	"testing"

	"github.com/callbus/callbus/internal/iparams"
)

// The embedded declarations parse, every callback is defined, and nothing lints.
func TestEmbeddedDeclarationsAreClean(t *testing.T) {
	warnings, err := Check()
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("lint warning: %s", w)
	}
}

// The keys other parts of callbus and the acceptance checks rely on are declared
// with the agreed types.
func TestDeclaredKeys(t *testing.T) {
	d, err := Declarations()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]iparams.Type{
		"api_url": iparams.URL, "api_domain": iparams.Domain, "api_key": iparams.APIKey,
		"account": iparams.Text, "accounts_dir": iparams.Text, "nats_url": iparams.Text, "nats_creds": iparams.Text,
		"nats_user": iparams.Text, "nats_password": iparams.Text, "nats_tls_ca": iparams.Text,
		"redis_url": iparams.URL, "redis_password": iparams.Text, "subject_prefix": iparams.Text,
		"redis_cluster_addrs": iparams.Text, "redis_sentinel_addrs": iparams.Text, "redis_sentinel_master": iparams.Text,
		"redis_sentinel_password": iparams.Text,
		"stream_name":             iparams.Text, "stream_max_age_hours": iparams.Number,
		"stream_duplicate_window_seconds": iparams.Number, "stream_replicas": iparams.Number,
		"rate_limit_share": iparams.Number, "calls_interval_seconds": iparams.Number,
		"open_calls_interval_seconds": iparams.Number, "metrics_interval_seconds": iparams.Number,
		"metrics_lookback_minutes": iparams.Number, "calls_backfill_hours": iparams.Number, "export_backfill_above_hours": iparams.Number, "users_interval_seconds": iparams.Number,
		"teams_interval_seconds": iparams.Number, "user_statuses_interval_seconds": iparams.Number,
		"poll_interval_floor_seconds": iparams.Number,
		"resources":                   iparams.Multiselect, "log_level": iparams.Dropdown, "log_format": iparams.Dropdown,
		"http_addr": iparams.Text, "debug_pprof": iparams.Checkbox, "lease_ttl_seconds": iparams.Number, "outbox_max_events": iparams.Number, "instance_id": iparams.Text,
		"shutdown_timeout_seconds": iparams.Number, "api_timeout_seconds": iparams.Number,
		"event_versions": iparams.Dropdown,
		"data_policy":    iparams.Dropdown, "data_policy_fields": iparams.Text, "data_policy_events": iparams.Text, "data_policy_hash_key": iparams.Text,
		"watermark_interval_seconds": iparams.Number,
	}
	for key, typ := range want {
		p, ok := d.Param(key)
		if !ok {
			t.Errorf("%s: not declared", key)
			continue
		}
		if p.Type != typ {
			t.Errorf("%s: type %s, want %s", key, p.Type, typ)
		}
		if p.Description == "" {
			t.Errorf("%s: no description", key)
		}
	}
	if len(d.Keys()) != len(want) {
		t.Errorf("declared %d keys, the test knows %d: add the new ones here", len(d.Keys()), len(want))
	}
	for _, key := range []string{"api_key", "nats_password", "redis_password", "redis_sentinel_password", "data_policy_hash_key"} {
		if p, _ := d.Param(key); !p.Secure {
			t.Errorf("%s: not secure", key)
		}
	}
}

func TestUnknownEnv(t *testing.T) {
	got := UnknownEnv([]string{"CALLBUS_API_KEY=x", "CALLBUS_API_KEY_FILE=/k", "CALLBUS_ACOUNT=acme",
		"HOME=/root", "CALLBUS_LOGLEVEL=debug", "CALLBUS_NATS_URL_FILE=/u", "PATH=/bin"})
	if want := []string{"CALLBUS_ACOUNT", "CALLBUS_LOGLEVEL"}; !slices.Equal(got, want) {
		t.Errorf("UnknownEnv = %v, want %v", got, want)
	}
}

// The commands that read settings from the environment alone take the declared
// defaults through EnvOrDefault, never a copy of their own.
func TestEnvOrDefault(t *testing.T) {
	getenv := env{"CALLBUS_STREAM_NAME": "EVENTS"}.get
	for _, tt := range []struct{ key, want string }{
		{"stream_name", "EVENTS"},
		{"nats_url", "nats://127.0.0.1:4222"},
		{"nats_creds", ""},
	} {
		if got := EnvOrDefault(getenv, tt.key); got != tt.want {
			t.Errorf("EnvOrDefault(%s) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
