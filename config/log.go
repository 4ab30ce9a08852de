package config

import (
	"net/url"
	"strings"

	"github.com/rs/zerolog"
)

// LogFields renders the settings for a start-up log line: secrets masked
// ("[REDACTED]", or "" when unset), passwords inside URLs replaced, durations as
// text ("5s"). Keys follow the parameter keys where one setting is one parameter.
func (s Settings) LogFields() map[string]any {
	return map[string]any{
		"api_url":                 redactURLs(s.APIURL),
		"api_key":                 s.APIKey.String(),
		"api_timeout":             s.APITimeout.String(),
		"account":                 s.Account,
		"nats_url":                redactURLs(s.NATSURL),
		"nats_creds":              s.NATSCreds,
		"nats_user":               s.NATSUser,
		"nats_password":           s.NATSPassword.String(),
		"nats_tls_ca":             s.NATSTLSCA,
		"redis_url":               redactURLs(s.RedisURL),
		"redis_password":          s.RedisPassword.String(),
		"subject_prefix":          s.SubjectPrefix,
		"stream_name":             s.StreamName,
		"stream_max_age":          s.StreamMaxAge.String(),
		"stream_duplicate_window": s.StreamDuplicates.String(),
		"stream_replicas":         s.StreamReplicas,
		"rate_limit_share":        s.RateLimitShare,
		"calls_interval":          s.CallsInterval.String(),
		"open_calls_interval":     s.OpenCallsInterval.String(),
		"metrics_interval":        s.MetricsInterval.String(),
		"metrics_lookback":        s.MetricsLookback.String(),
		"calls_backfill":          s.CallsBackfill.String(),
		"export_backfill_above":   s.ExportBackfillAbove.String(),
		"users_interval":          s.UsersInterval.String(),
		"teams_interval":          s.TeamsInterval.String(),
		"user_statuses_interval":  s.UserStatusesInterval.String(),
		"resources":               append([]string(nil), s.Resources...),
		"log_level":               s.LogLevel,
		"log_format":              s.LogFormat,
		"http_addr":               s.HTTPAddr,
		"lease_ttl":               s.LeaseTTL.String(),
		"instance_id":             s.InstanceID,
		"shutdown_timeout":        s.ShutdownTimeout.String(),
	}
}

// MarshalZerologObject logs LogFields, e.g. log.Info().Object("config", s).
func (s Settings) MarshalZerologObject(e *zerolog.Event) { e.Fields(s.LogFields()) }

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
