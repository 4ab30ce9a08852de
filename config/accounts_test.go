package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/iparams"
)

// accountsDir writes files (name → content) into a new directory.
func accountsDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The process's values with a fleet: shared settings only.
var fleetBase = map[string]any{"redis_url": "redis://r:6379/0", "rate_limit_share": "60", "accounts_dir": "/accounts"}

func TestReadAccountFile(t *testing.T) {
	dir := accountsDir(t, map[string]string{
		"acme.json": `{"api_url": "http://sim:8080/a/acme", "api_key_file": "acme.key", "calls_interval_seconds": 2}`,
		"acme.key":  testKey + "\n",
	})
	a, err := ReadAccountFile(dir, "acme.json", fleetBase)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Settings
	switch {
	case a.Name != "acme" || s.Account != "acme":
		t.Errorf("name %q, account %q; want acme from the file's name", a.Name, s.Account)
	case s.APIKey.Reveal() != testKey:
		t.Errorf("API key not read from acme.key (one trailing newline dropped)")
	case s.APIURL != "http://sim:8080/a/acme" || s.CallsInterval.Seconds() != 2:
		t.Errorf("the file's values are not applied: %s %s", s.APIURL, s.CallsInterval)
	case s.RedisURL != "redis://r:6379/0" || s.RateLimitShare != 0.6:
		t.Errorf("the process's values are not under the file's: %s %v", s.RedisURL, s.RateLimitShare)
	case s.StreamName != "CALLCENTER":
		t.Errorf("defaults not applied: stream %q", s.StreamName)
	case len(a.Digest) != 16:
		t.Errorf("digest %q", a.Digest)
	}

	// An absolute key path, and the key inline.
	abs := accountsDir(t, map[string]string{"k": "other-key"})
	dir2 := accountsDir(t, map[string]string{
		"beta.json":  `{"api_domain": "beta", "api_key_file": "` + filepath.Join(abs, "k") + `", "account": "beta"}`,
		"gamma.json": `{"api_url": "http://sim:8080", "api_key": "inline-key"}`,
	})
	if b, err := ReadAccountFile(dir2, "beta.json", nil); err != nil || b.Settings.APIKey.Reveal() != "other-key" {
		t.Errorf("absolute api_key_file: %v", err)
	}
	if g, err := ReadAccountFile(dir2, "gamma.json", nil); err != nil || g.Settings.APIKey.Reveal() != "inline-key" {
		t.Errorf("inline api_key: %v", err)
	}
}

// Every refusal names the file and the key at fault, and never the key's value.
func TestReadAccountFileRefuses(t *testing.T) {
	const good = `"api_url": "http://sim:8080", "api_key_file": "k.key"`
	tests := []struct{ name, file, content, key string }{
		{"malformed JSON", "acme.json", `{"api_url": `, ""},
		{"not an object", "acme.json", `["api_url"]`, ""},
		{"unknown key", "acme.json", `{` + good + `, "colour": "blue"}`, "colour"},
		{"wrong type", "acme.json", `{` + good + `, "rate_limit_share": "lots"}`, "rate_limit_share"},
		{"out of bounds", "acme.json", `{` + good + `, "rate_limit_share": 500}`, "rate_limit_share"},
		{"bad account name", "acme.eu.json", `{` + good + `}`, "account"},
		{"account key disagrees", "acme.json", `{` + good + `, "account": "other"}`, "account"},
		{"missing key file", "acme.json", `{"api_url": "http://sim:8080", "api_key_file": "nope.key"}`, "api_key_file"},
		{"empty key file", "acme.json", `{"api_url": "http://sim:8080", "api_key_file": "empty.key"}`, "api_key_file"},
		{"key file not a path", "acme.json", `{"api_url": "http://sim:8080", "api_key_file": 7}`, "api_key_file"},
		{"no key", "acme.json", `{"api_url": "http://sim:8080"}`, "api_key_file"},
		{"key twice", "acme.json", `{` + good + `, "api_key": "x"}`, "api_key_file"},
		{"no API address", "acme.json", `{"api_key_file": "k.key"}`, "api_url"},
		{"setting of the process", "acme.json", `{` + good + `, "redis_url": "redis://other:6379/0"}`, "redis_url"},
		{"another setting of the process", "acme.json", `{` + good + `, "lease_ttl_seconds": 30}`, "lease_ttl_seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := accountsDir(t, map[string]string{tt.file: tt.content, "k.key": testKey, "empty.key": "\n"})
			_, err := ReadAccountFile(dir, tt.file, fleetBase)
			var afe *AccountFileError
			if !errors.As(err, &afe) || afe.File != tt.file {
				t.Fatalf("err = %v, want an *AccountFileError for %s", err, tt.file)
			}
			var ps iparams.Problems
			if !errors.As(err, &ps) || len(ps.ByKey()[tt.key]) == 0 {
				t.Errorf("problems %v: none for key %q", ps, tt.key)
			}
			if !strings.HasPrefix(err.Error(), tt.file+": ") || strings.Contains(err.Error(), testKey) {
				t.Errorf("message %q: want it to start with the file and hold no key", err)
			}
		})
	}
}

// The digest follows the file and its key file, and only them.
func TestAccountDigest(t *testing.T) {
	dir := accountsDir(t, map[string]string{"acme.json": `{"api_url": "http://sim:8080", "api_key_file": "k"}`, "k": "one"})
	digest := func() string {
		a, err := ReadAccountFile(dir, "acme.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		return a.Digest
	}
	d1, d2 := digest(), digest()
	if d1 != d2 {
		t.Errorf("digest changed without a change: %s %s", d1, d2)
	}
	if err := os.WriteFile(filepath.Join(dir, "k"), []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d3 := digest(); d3 == d1 {
		t.Error("digest unchanged after the key rotated")
	}
}

// With accounts_dir the process needs no account of its own; without, it does.
func TestLoadFleetProcess(t *testing.T) {
	s, err := Load(env{"CALLBUS_ACCOUNTS_DIR": "/accounts", "CALLBUS_REDIS_URL": "redis://r:6379/0"}.get, "")
	if err != nil {
		t.Fatalf("fleet process: %v", err)
	}
	if s.AccountsDir != "/accounts" || s.Account != "" || s.RedisURL != "redis://r:6379/0" {
		t.Errorf("settings %+v", s)
	}
	_, err = Load(env{"CALLBUS_ACCOUNTS_DIR": "/accounts", "CALLBUS_RATE_LIMIT_SHARE": "500"}.get, "")
	if err == nil || !strings.Contains(err.Error(), "CALLBUS_RATE_LIMIT_SHARE") {
		t.Errorf("a fleet's bad shared value: %v, want it refused", err)
	}
	_, err = Load(env{"CALLBUS_REDIS_URL": "redis://r:6379/0"}.get, "")
	for _, v := range []string{"CALLBUS_ACCOUNT", "CALLBUS_API_KEY", "CALLBUS_API_URL"} {
		if err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("one account without %s: %v", v, err)
		}
	}
}

func TestProcessValues(t *testing.T) {
	file := writeFile(t, "values.json", `{"stream_name": "EVENTS"}`)
	v, err := ProcessValues(env{"CALLBUS_REDIS_URL": "redis://r:6379/0"}.get, file)
	if err != nil {
		t.Fatal(err)
	}
	if v["redis_url"] != "redis://r:6379/0" || v["stream_name"] != "EVENTS" || len(v) != 2 {
		t.Errorf("ProcessValues = %v", v)
	}
}

// The settings every account of a process shares are the ones iparams.json
// declares with scope process, and the per-account ones are not taken for them.
func TestProcessKeys(t *testing.T) {
	d, err := Declarations()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"redis_url", "redis_cluster_addrs", "nats_url", "nats_password", "stream_name", "stream_replicas",
		"log_level", "accounts_dir", "subject_prefix", "http_addr", "debug_pprof", "lease_ttl_seconds", "instance_id",
		"shutdown_timeout_seconds"} {
		if !processKey(d, k) {
			t.Errorf("%s: not declared a setting of the process (type_attributes.scope)", k)
		}
	}
	for _, k := range []string{"api_url", "api_domain", "api_key", "account", "rate_limit_share", "calls_interval_seconds",
		"metrics_lookback_minutes", "resources", "outbox_max_events", "api_timeout_seconds", "export_backfill_above_hours", "no_such_key"} {
		if processKey(d, k) {
			t.Errorf("%s: taken for a setting of the process", k)
		}
	}
}

// Any account file is accepted or refused with problems, never a panic, and a
// refusal never holds the API key.
func FuzzReadAccountFile(f *testing.F) {
	f.Add(`{"api_url": "http://sim:8080", "api_key_file": "k.key"}`)
	f.Add(`{"api_domain": "acme", "api_key": "x", "rate_limit_share": 50, "resources": ["calls"]}`)
	f.Add(`{"api_url": "http://sim:8080", "api_key_file": "k.key", "account": "acme", "redis_url": 7}`)
	f.Add(`{"api_key_file": ["k.key"]}`)
	f.Add(`[]`)
	dir := accountsDir(f, nil)
	if err := os.WriteFile(filepath.Join(dir, "k.key"), []byte(testKey), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, content string) {
		if err := os.WriteFile(filepath.Join(dir, "acme.json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := ReadAccountFile(dir, "acme.json", fleetBase)
		var afe *AccountFileError
		switch {
		case err == nil && (a.Name != "acme" || a.Settings.Account != "acme" || a.Digest == ""):
			t.Fatalf("accepted as %+v", a)
		case err != nil && (!errors.As(err, &afe) || len(afe.Problems) == 0):
			t.Fatalf("refused without problems: %v", err)
		case err != nil && strings.Contains(err.Error(), testKey):
			t.Fatalf("the key leaked: %v", err)
		}
	})
}
