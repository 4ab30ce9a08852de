package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/iparams"
	"github.com/rs/zerolog"
)

// env is a fake environment.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// with returns a copy of e with more variables.
func (e env) with(kv ...string) env {
	out := env{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

const testKey = "sk_live_9f8e7d6c5b4a"

var minimal = env{
	"CALLBUS_API_URL": "http://127.0.0.1:8080",
	"CALLBUS_API_KEY": testKey,
	"CALLBUS_ACCOUNT": "acme",
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadDefaults(t *testing.T) {
	s, err := Load(minimal.get, "")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	want := Settings{
		APIURL: "http://127.0.0.1:8080", APIKey: s.APIKey, APITimeout: 30 * time.Second, Account: "acme",
		NATSURL: "nats://127.0.0.1:4222", RedisURL: "redis://127.0.0.1:6379/0",
		SubjectPrefix: "callcenter", StreamName: "CALLCENTER",
		StreamMaxAge: 168 * time.Hour, StreamDuplicates: 10 * time.Minute, StreamReplicas: 1,
		RateLimitShare: 0.8,
		CallsInterval:  5 * time.Second, OpenCallsInterval: 10 * time.Second, MetricsInterval: 30 * time.Second,
		MetricsLookback: 2 * time.Hour, CallsBackfill: 24 * time.Hour, ExportBackfillAbove: 168 * time.Hour, UsersInterval: 30 * time.Second, TeamsInterval: 5 * time.Minute,
		UserStatusesInterval: 10 * time.Minute,
		PollIntervalFloor:    2 * time.Second,
		Resources:            []string{"calls", "call_metrics", "users", "user_statuses", "teams"},
		LogLevel:             "info", LogFormat: "json", HTTPAddr: ":8081", LeaseTTL: 15 * time.Second, OutboxMaxEvents: 200000, EventVersions: "all", WatermarkInterval: 30 * time.Second,
		InstanceID: host, ShutdownTimeout: 20 * time.Second,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("settings\n got %+v\nwant %+v", s, want)
	}
	if s.APIKey.Reveal() != testKey {
		t.Error("the API key was not loaded")
	}
	if !s.Polls("call_metrics") || s.Polls("recordings") {
		t.Errorf("Polls(call_metrics) = %v, Polls(recordings) = %v; want true, false", s.Polls("call_metrics"), s.Polls("recordings"))
	}
}

// Precedence: environment > _FILE > values file > default.
func TestLoadPrecedence(t *testing.T) {
	valuesFile := writeFile(t, "values.json", `{"subject_prefix": "from_values", "stream_replicas": 3}`)
	secretFile := writeFile(t, "prefix", "from_secret_file\n")
	tests := []struct {
		name       string
		env        env
		file       string
		wantPrefix string
	}{
		{"default", minimal, "", "callcenter"},
		{"values file over default", minimal, valuesFile, "from_values"},
		{"_FILE over values file", minimal.with("CALLBUS_SUBJECT_PREFIX_FILE", secretFile), valuesFile, "from_secret_file"},
		{"environment over _FILE", minimal.with("CALLBUS_SUBJECT_PREFIX_FILE", secretFile, "CALLBUS_SUBJECT_PREFIX", "from_env"), valuesFile, "from_env"},
		{"empty environment counts as unset", minimal.with("CALLBUS_SUBJECT_PREFIX_FILE", secretFile, "CALLBUS_SUBJECT_PREFIX", ""), valuesFile, "from_secret_file"},
		{"environment over values file", minimal.with("CALLBUS_SUBJECT_PREFIX", "from_env"), valuesFile, "from_env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(tt.env.get, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if s.SubjectPrefix != tt.wantPrefix {
				t.Errorf("subject prefix %q, want %q", s.SubjectPrefix, tt.wantPrefix)
			}
		})
	}
}

func TestLoadSecretFromFile(t *testing.T) {
	keyFile := writeFile(t, "api_key", testKey+"\r\n")
	e := minimal.with("CALLBUS_API_KEY", "", "CALLBUS_API_KEY_FILE", keyFile)
	s, err := Load(e.get, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.APIKey.Reveal() != testKey {
		t.Errorf("API key from file: trailing newline not trimmed (len %d)", len(s.APIKey.Reveal()))
	}
	e = minimal.with("CALLBUS_API_KEY", "", "CALLBUS_API_KEY_FILE", filepath.Join(t.TempDir(), "missing"))
	_, err = Load(e.get, "")
	if !hasProblem(err, "api_key", "read CALLBUS_API_KEY_FILE") {
		t.Errorf("missing key file: %v", err)
	}
}

func TestLoadValuesFileTypes(t *testing.T) {
	file := writeFile(t, "values.json", `{"api_url": "https://acme.example.com/", "api_key": "k", "account": "acme",
		"resources": ["teams", "calls"], "rate_limit_share": 50, "log_level": "debug"}`)
	s, err := Load(env{}.get, file)
	if err != nil {
		t.Fatal(err)
	}
	if s.APIURL != "https://acme.example.com" || !slices.Equal(s.Resources, []string{"calls", "teams"}) ||
		s.RateLimitShare != 0.5 || s.LogLevel != "debug" || s.Polls("users") {
		t.Errorf("settings from the values file: %+v", s)
	}
}

func hasProblem(err error, key, msg string) bool {
	var ps iparams.Problems
	if !errors.As(err, &ps) {
		return false
	}
	for _, p := range ps {
		if p.Key == key && strings.Contains(p.Message, msg) {
			return true
		}
	}
	return false
}

func TestLoadRules(t *testing.T) {
	creds := writeFile(t, "nats.creds", "creds")
	tests := []struct {
		name string
		env  env
		key  string // the key of the expected problem
		msg  string
	}{
		{"no API address", minimal.with("CALLBUS_API_URL", ""), "api_url", "required unless CALLBUS_API_DOMAIN"},
		{"URL and domain", minimal.with("CALLBUS_API_DOMAIN", "acme"), "api_domain", "not both"},
		{"URL with /api/v1", minimal.with("CALLBUS_API_URL", "https://a.example/api/v1/"), "api_url", "leave out /api/v1"},
		{"URL with a query", minimal.with("CALLBUS_API_URL", "https://a.example/?x=1"), "api_url", "without a query"},
		{"URL not http", minimal.with("CALLBUS_API_URL", "ftp://a.example"), "api_url", "http:// or https://"},
		{"no API key", minimal.with("CALLBUS_API_KEY", ""), "api_key", "required"},
		{"no account", minimal.with("CALLBUS_ACCOUNT", ""), "account", "required"},
		{"account with a dot", minimal.with("CALLBUS_ACCOUNT", "acme.eu"), "account", "NATS subject"},
		{"prefix with a wildcard", minimal.with("CALLBUS_SUBJECT_PREFIX", "cc.*"), "subject_prefix", "NATS subject"},
		{"replicas above 5", minimal.with("CALLBUS_STREAM_REPLICAS", "7"), "stream_replicas", "at most 5"},
		{"share of 0", minimal.with("CALLBUS_RATE_LIMIT_SHARE", "0"), "rate_limit_share", "at least 1"},
		{"share above 100", minimal.with("CALLBUS_RATE_LIMIT_SHARE", "101"), "rate_limit_share", "at most 100"},
		{"duplicate window beyond retention", minimal.with("CALLBUS_STREAM_MAX_AGE_HOURS", "1", "CALLBUS_STREAM_DUPLICATE_WINDOW_SECONDS", "3601"), "stream_duplicate_window_seconds", "retention"},
		{"look-back within the interval", minimal.with("CALLBUS_METRICS_INTERVAL_SECONDS", "120", "CALLBUS_METRICS_LOOKBACK_MINUTES", "2"), "metrics_lookback_minutes", "longer than"},
		{"unknown resource", minimal.with("CALLBUS_RESOURCES", "calls,recordings"), "resources", `"recordings" is not one of`},
		{"no resource", minimal.with("CALLBUS_RESOURCES", " , "), "resources", "required"},
		{"log level", minimal.with("CALLBUS_LOG_LEVEL", "trace"), "log_level", "not one of"},
		{"http address", minimal.with("CALLBUS_HTTP_ADDR", "8081"), "http_addr", "host:port"},
		{"redis scheme", minimal.with("CALLBUS_REDIS_URL", "http://redis:6379"), "redis_url", "redis://"},
		{"redis database", minimal.with("CALLBUS_REDIS_URL", "redis://redis:6379/zero"), "redis_url", "database number"},
		{"redis password twice", minimal.with("CALLBUS_REDIS_URL", "redis://:pw@redis:6379/0", "CALLBUS_REDIS_PASSWORD", "pw"), "redis_password", "one place"},
		{"nats scheme", minimal.with("CALLBUS_NATS_URL", "http://nats:4222"), "nats_url", "nats://"},
		{"nats user without password", minimal.with("CALLBUS_NATS_USER", "u"), "nats_password", "required with CALLBUS_NATS_USER"},
		{"nats password without user", minimal.with("CALLBUS_NATS_PASSWORD", "p"), "nats_user", "required with CALLBUS_NATS_PASSWORD"},
		{"nats creds and user", minimal.with("CALLBUS_NATS_CREDS", creds, "CALLBUS_NATS_USER", "u", "CALLBUS_NATS_PASSWORD", "p"), "nats_creds", "not both"},
		{"nats creds missing", minimal.with("CALLBUS_NATS_CREDS", filepath.Join(t.TempDir(), "none.creds")), "nats_creds", "cannot read"},
		{"nats CA missing", minimal.with("CALLBUS_NATS_TLS_CA", filepath.Join(t.TempDir(), "ca.pem")), "nats_tls_ca", "cannot read"},
		{"lease too short", minimal.with("CALLBUS_LEASE_TTL_SECONDS", "1"), "lease_ttl_seconds", "at least 3"},
		{"interval not a number", minimal.with("CALLBUS_CALLS_INTERVAL_SECONDS", "5s"), "calls_interval_seconds", "integer"},
		{"instance id with a space", minimal.with("CALLBUS_INSTANCE_ID", "poller 0"), "instance_id", "letters, digits"},
		{"values file missing", minimal, "--config", "read values file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := ""
			if tt.key == "--config" {
				file = filepath.Join(t.TempDir(), "missing.json")
			}
			_, err := Load(tt.env.get, file)
			if !hasProblem(err, tt.key, tt.msg) {
				t.Fatalf("error %v, want a problem on %s containing %q", err, tt.key, tt.msg)
			}
			if !IsInvalid(err) {
				t.Error("IsInvalid = false")
			}
		})
	}
}

func TestLoadGoodVariants(t *testing.T) {
	creds := writeFile(t, "nats.creds", "creds")
	tests := []struct {
		name  string
		env   env
		check func(Settings) bool
	}{
		{"domain instead of URL", minimal.with("CALLBUS_API_URL", "", "CALLBUS_API_DOMAIN", "Acme"),
			func(s Settings) bool { return s.APIURL == "https://acme.mycallcenter.com" }},
		{"several NATS servers", minimal.with("CALLBUS_NATS_URL", "nats://a:4222, tls://b:4222"),
			func(s Settings) bool { return s.NATSURL == "nats://a:4222,tls://b:4222" }},
		{"NATS creds", minimal.with("CALLBUS_NATS_CREDS", creds), func(s Settings) bool { return s.NATSCreds == creds }},
		{"NATS user and password", minimal.with("CALLBUS_NATS_USER", "u", "CALLBUS_NATS_PASSWORD", "p"),
			func(s Settings) bool { return s.NATSUser == "u" && s.NATSPassword.Reveal() == "p" }},
		{"rediss", minimal.with("CALLBUS_REDIS_URL", "rediss://r:6380/2", "CALLBUS_REDIS_PASSWORD", "p"),
			func(s Settings) bool { return s.RedisURL == "rediss://r:6380/2" && s.RedisPassword.Reveal() == "p" }},
		{"instance id", minimal.with("CALLBUS_INSTANCE_ID", "poller-0"), func(s Settings) bool { return s.InstanceID == "poller-0" }},
		{"share 100", minimal.with("CALLBUS_RATE_LIMIT_SHARE", "100"), func(s Settings) bool { return s.RateLimitShare == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(tt.env.get, "")
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(s) {
				t.Errorf("settings %+v", s)
			}
		})
	}
}

func TestLoadListsEveryProblem(t *testing.T) {
	e := env{"CALLBUS_STREAM_REPLICAS": "9", "CALLBUS_LOG_FORMAT": "xml"}
	file := writeFile(t, "values.json", `{"acount": "typo"}`)
	_, err := Load(e.get, file)
	var ps iparams.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not iparams.Problems", err)
	}
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	if want := []string{"api_key", "account", "stream_replicas", "log_format", "acount", "api_url"}; !slices.Equal(keys, want) {
		t.Errorf("problems on %v, want %v: %v", keys, want, err)
	}
}

// The API key given in the environment appears in no output: errors, docs, log
// fields, the zerolog object, the schema, %v and %+v of the settings.
func TestAPIKeyAppearsNowhere(t *testing.T) {
	s, err := Load(minimal.get, "")
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	fields, _ := json.Marshal(s.LogFields())
	outputs = append(outputs, string(fields), fmt.Sprintf("%v %+v %#v %s", s, s, s, s.APIKey))
	var buf strings.Builder
	logger := zerolog.New(&buf)
	logger.Info().Object("config", s).Interface("settings", s).Msg("start")
	outputs = append(outputs, buf.String())
	docs, _ := Docs()
	schema, _ := Schema()
	outputs = append(outputs, docs, string(schema))
	// Errors: a bad value next to the key, and a key that breaks its own rule.
	_, err = Load(minimal.with("CALLBUS_STREAM_REPLICAS", "0").get, "")
	outputs = append(outputs, err.Error())
	_, err = Load(minimal.with("CALLBUS_API_KEY", testKey+" "+testKey).get, "")
	outputs = append(outputs, err.Error())
	file := writeFile(t, "values.json", `{"api_key": "`+testKey+`", "nope": "`+testKey+`"}`)
	_, err = Load(env{}.get, file)
	outputs = append(outputs, err.Error())
	for i, out := range outputs {
		if strings.Contains(out, testKey) {
			t.Errorf("output %d shows the API key: %s", i, out)
		}
	}
	if !strings.Contains(string(fields), `"CALLBUS_API_KEY":"[REDACTED]"`) {
		t.Errorf("log fields do not show the key as set: %s", fields)
	}
}

func TestLogFieldsRedactURLs(t *testing.T) {
	e := minimal.with("CALLBUS_REDIS_URL", "redis://user:hunter2@r:6379/0", "CALLBUS_NATS_URL", "nats://a:pass1@n1:4222,nats://n2:4222")
	s, err := Load(e.get, "")
	if err != nil {
		t.Fatal(err)
	}
	f := s.LogFields()
	if f["CALLBUS_REDIS_URL"] != "redis://user:xxxxx@r:6379/0" || f["CALLBUS_NATS_URL"] != "nats://a:xxxxx@n1:4222,nats://n2:4222" {
		t.Errorf("URLs in log fields: %v %v", f["CALLBUS_REDIS_URL"], f["CALLBUS_NATS_URL"])
	}
}
