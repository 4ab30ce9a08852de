package config

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/callbus/callbus/internal/secret"
)

// logged maps each parameter to its value in Settings, in the parameter's own
// unit (calls_interval_seconds: 5, not "5s"), as a user would write it.
// api_domain has no entry: it only derives api_url.
var logged = []struct {
	key   string
	value func(Settings) any
}{
	{"api_url", func(s Settings) any { return redactURLs(s.APIURL) }},
	{"api_key", func(s Settings) any { return s.APIKey.String() }},
	{"api_timeout_seconds", func(s Settings) any { return in(s.APITimeout, time.Second) }},
	{"account", func(s Settings) any { return s.Account }},
	{"accounts_dir", func(s Settings) any { return s.AccountsDir }},
	{"nats_url", func(s Settings) any { return redactURLs(s.NATSURL) }},
	{"nats_creds", func(s Settings) any { return s.NATSCreds }},
	{"nats_user", func(s Settings) any { return s.NATSUser }},
	{"nats_password", func(s Settings) any { return s.NATSPassword.String() }},
	{"nats_tls_ca", func(s Settings) any { return s.NATSTLSCA }},
	{"redis_url", func(s Settings) any { return redactURLs(s.RedisURL) }},
	{"redis_password", func(s Settings) any { return s.RedisPassword.String() }},
	{"redis_cluster_addrs", func(s Settings) any { return strings.Join(s.RedisClusterAddrs, ",") }},
	{"redis_sentinel_addrs", func(s Settings) any { return strings.Join(s.RedisSentinelAddrs, ",") }},
	{"redis_sentinel_master", func(s Settings) any { return s.RedisSentinelMaster }},
	{"redis_sentinel_password", func(s Settings) any { return s.RedisSentinelPassword.String() }},
	{"subject_prefix", func(s Settings) any { return s.SubjectPrefix }},
	{"stream_name", func(s Settings) any { return s.StreamName }},
	{"stream_max_age_hours", func(s Settings) any { return in(s.StreamMaxAge, time.Hour) }},
	{"stream_duplicate_window_seconds", func(s Settings) any { return in(s.StreamDuplicates, time.Second) }},
	{"stream_replicas", func(s Settings) any { return int64(s.StreamReplicas) }},
	{"rate_limit_share", func(s Settings) any { return int64(math.Round(s.RateLimitShare * 100)) }},
	{"calls_interval_seconds", func(s Settings) any { return in(s.CallsInterval, time.Second) }},
	{"open_calls_interval_seconds", func(s Settings) any { return in(s.OpenCallsInterval, time.Second) }},
	{"metrics_interval_seconds", func(s Settings) any { return in(s.MetricsInterval, time.Second) }},
	{"metrics_lookback_minutes", func(s Settings) any { return in(s.MetricsLookback, time.Minute) }},
	{"calls_backfill_hours", func(s Settings) any { return in(s.CallsBackfill, time.Hour) }},
	{"export_backfill_above_hours", func(s Settings) any { return in(s.ExportBackfillAbove, time.Hour) }},
	{"users_interval_seconds", func(s Settings) any { return in(s.UsersInterval, time.Second) }},
	{"teams_interval_seconds", func(s Settings) any { return in(s.TeamsInterval, time.Second) }},
	{"user_statuses_interval_seconds", func(s Settings) any { return in(s.UserStatusesInterval, time.Second) }},
	{"poll_interval_floor_seconds", func(s Settings) any { return in(s.PollIntervalFloor, time.Second) }},
	{"resources", func(s Settings) any { return strings.Join(s.Resources, ",") }},
	{"data_policy", func(s Settings) any { return s.DataPolicy.Version() }},
	{"data_policy_fields", func(s Settings) any { return s.DataPolicy.FieldActions() }},
	{"data_policy_events", func(s Settings) any { return s.DataPolicy.EventPatterns() }},
	{"data_policy_hash_key", func(s Settings) any {
		if s.DataPolicy.Hashes() {
			return secret.Redacted
		}
		return ""
	}},
	{"log_level", func(s Settings) any { return s.LogLevel }},
	{"log_format", func(s Settings) any { return s.LogFormat }},
	{"http_addr", func(s Settings) any { return s.HTTPAddr }},
	{"debug_pprof", func(s Settings) any { return s.DebugPprof }},
	{"lease_ttl_seconds", func(s Settings) any { return in(s.LeaseTTL, time.Second) }},
	{"outbox_max_events", func(s Settings) any { return s.OutboxMaxEvents }},
	{"event_versions", func(s Settings) any { return s.EventVersions }},
	{"watermark_interval_seconds", func(s Settings) any { return in(s.WatermarkInterval, time.Second) }},
	{"instance_id", func(s Settings) any { return s.InstanceID }},
	{"shutdown_timeout_seconds", func(s Settings) any { return in(s.ShutdownTimeout, time.Second) }},
}

// LogFields renders the settings for a start-up log line, short: only those that
// differ from their declared default, each under its environment variable
// (CALLBUS_CALLS_INTERVAL_SECONDS) with its value as the user writes it (5;
// resources comma-separated). Secrets show as "[REDACTED]" when set, passwords
// inside URLs as "xxxxx". `poller config docs` lists the defaults left out.
func (s Settings) LogFields() map[string]any {
	d, err := Declarations()
	if err != nil { // the package's tests rule it out
		return map[string]any{"error": err.Error()}
	}
	out := make(map[string]any)
	for _, l := range logged {
		v := l.value(s)
		p, _ := d.Param(l.key)
		def := p.Default
		if list, ok := def.([]string); ok {
			def = strings.Join(list, ",")
		}
		if v == "" || (def != nil && fmt.Sprint(v) == fmt.Sprint(def)) {
			continue
		}
		out[d.EnvVar(l.key)] = v
	}
	return out
}

// MarshalZerologObject logs LogFields, e.g. log.Info().Object("config", s).
func (s Settings) MarshalZerologObject(e *zerolog.Event) { e.Fields(s.LogFields()) }

func in(d, unit time.Duration) int64 { return int64(d / unit) }

// redactURLs replaces the password of each comma-separated URL with "xxxxx".
func redactURLs(list string) string {
	if list == "" {
		return ""
	}
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if u, err := url.Parse(p); err == nil {
			parts[i] = u.Redacted()
		} else {
			parts[i] = "[unparsable URL]"
		}
	}
	return strings.Join(parts, ",")
}
