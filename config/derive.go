package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/iparams"
	"github.com/callbus/callbus/internal/secret"
)

// FromValues derives Settings from values validated against Declarations, and
// checks the rules between parameters that a single declaration cannot express.
// The setup page uses it too. It returns every problem found, or none (a nil
// Problems, with the Settings): test len, since a nil Problems stored in an error
// is not a nil error. It does no I/O except reading the host name when instance_id
// is empty. Given partial values (ValidatePartial), it checks the rules it can and
// reports problems that may repeat those of the failed values. Messages name other
// parameters by key (Load names them by variable).
func FromValues(v *iparams.Values) (Settings, iparams.Problems) {
	return fromValues(v, func(key string) string { return key }, false)
}

// fromValues is FromValues with name giving the name of a parameter in messages.
// With fleet, the settings each account file gives may be missing (see
// perAccountRequired).
func fromValues(v *iparams.Values, name func(key string) string, fleet bool) (Settings, iparams.Problems) {
	r := reader{v: v, name: name, fleet: fleet}
	s := Settings{
		APIKey:               r.secret("api_key"),
		APITimeout:           r.duration("api_timeout_seconds", time.Second),
		Account:              r.text("account"),
		AccountsDir:          r.text("accounts_dir"),
		NATSURL:              joinServers(r.text("nats_url")),
		NATSCreds:            r.text("nats_creds"),
		NATSUser:             r.text("nats_user"),
		NATSPassword:         r.secret("nats_password"),
		NATSTLSCA:            r.text("nats_tls_ca"),
		RedisURL:             r.text("redis_url"),
		RedisPassword:        r.secret("redis_password"),
		SubjectPrefix:        r.text("subject_prefix"),
		StreamName:           r.text("stream_name"),
		StreamMaxAge:         r.duration("stream_max_age_hours", time.Hour),
		StreamDuplicates:     r.duration("stream_duplicate_window_seconds", time.Second),
		StreamReplicas:       int(r.number("stream_replicas")),
		RateLimitShare:       float64(r.number("rate_limit_share")) / 100,
		CallsInterval:        r.duration("calls_interval_seconds", time.Second),
		OpenCallsInterval:    r.duration("open_calls_interval_seconds", time.Second),
		MetricsInterval:      r.duration("metrics_interval_seconds", time.Second),
		MetricsLookback:      r.duration("metrics_lookback_minutes", time.Minute),
		CallsBackfill:        r.duration("calls_backfill_hours", time.Hour),
		ExportBackfillAbove:  r.duration("export_backfill_above_hours", time.Hour),
		UsersInterval:        r.duration("users_interval_seconds", time.Second),
		TeamsInterval:        r.duration("teams_interval_seconds", time.Second),
		UserStatusesInterval: r.duration("user_statuses_interval_seconds", time.Second),
		PollIntervalFloor:    r.duration("poll_interval_floor_seconds", time.Second),
		Resources:            r.list("resources"),
		LogLevel:             r.text("log_level"),
		LogFormat:            r.text("log_format"),
		HTTPAddr:             r.text("http_addr"),
		DebugPprof:           r.flag("debug_pprof"),
		LeaseTTL:             r.duration("lease_ttl_seconds", time.Second),
		OutboxMaxEvents:      r.number("outbox_max_events"),
		EventVersions:        r.text("event_versions"),
		WatermarkInterval:    r.duration("watermark_interval_seconds", time.Second),
		InstanceID:           r.text("instance_id"),
		ShutdownTimeout:      r.duration("shutdown_timeout_seconds", time.Second),
	}
	s.APIURL = r.apiURL()
	s.RedisClusterAddrs = splitList(r.text("redis_cluster_addrs"))
	s.RedisSentinelAddrs = splitList(r.text("redis_sentinel_addrs"))
	s.RedisSentinelMaster = r.text("redis_sentinel_master")
	s.RedisSentinelPassword = r.secret("redis_sentinel_password")
	if s.InstanceID == "" {
		s.InstanceID = hostname()
	}
	r.checkNATS(s)
	r.checkRedis(s)
	s.DataPolicy = r.dataPolicy(s.Account)
	// Zero durations are values that failed validation (their minimum is 1).
	if s.StreamMaxAge > 0 && s.StreamDuplicates > s.StreamMaxAge {
		r.add("stream_duplicate_window_seconds", "must not exceed the retention (%s = %s)", r.name("stream_max_age_hours"), s.StreamMaxAge)
	}
	if s.MetricsLookback > 0 && s.MetricsLookback <= s.MetricsInterval {
		r.add("metrics_lookback_minutes", "must be longer than the call metrics interval (%s)", s.MetricsInterval)
	}
	if len(r.ps) > 0 {
		return Settings{}, r.ps
	}
	return s, nil
}

// apiURL is api_url less a trailing slash, or the URL of api_domain; exactly one
// must be set.
func (r *reader) apiURL() string {
	raw, domain := r.text("api_url"), r.text("api_domain")
	switch {
	case raw == "" && domain == "" && r.fleet:
		return "" // each account file gives it
	case raw == "" && domain == "":
		r.add("api_url", "required unless %s is set: the API base URL, e.g. https://acme.mycallcenter.com", r.name("api_domain"))
		return ""
	case raw != "" && domain != "":
		r.add("api_domain", "set %s or %s, not both", r.name("api_url"), r.name("api_domain"))
		return ""
	case domain != "":
		base, err := r.v.DomainURL("api_domain")
		if err != nil {
			r.add("api_domain", "%v", err)
		}
		return base
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil: // Validate checked it already
	case u.RawQuery != "" || u.Fragment != "":
		r.add("api_url", "must be a base URL, without a query or fragment")
	case strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v1"):
		r.add("api_url", "leave out /api/v1: callbus adds it to every path")
	}
	return strings.TrimSuffix(raw, "/")
}

func (r *reader) checkNATS(s Settings) {
	for _, server := range strings.Split(s.NATSURL, ",") {
		if u, err := url.Parse(server); s.NATSURL != "" && (err != nil || u.Host == "") {
			r.add("nats_url", "a server is not a URL with a host")
			break
		}
	}
	switch {
	case s.NATSCreds != "" && (s.NATSUser != "" || !s.NATSPassword.IsZero()):
		r.add("nats_creds", "use a credentials file or a user and password, not both")
	case s.NATSUser != "" && s.NATSPassword.IsZero():
		r.add("nats_password", "required with %s", r.name("nats_user"))
	case s.NATSUser == "" && !s.NATSPassword.IsZero():
		r.add("nats_user", "required with %s", r.name("nats_password"))
	}
}

func (r *reader) checkRedis(s Settings) {
	u, err := url.Parse(s.RedisURL)
	if err != nil {
		return // Validate checked it already
	}
	if _, hasPassword := u.User.Password(); hasPassword && !s.RedisPassword.IsZero() {
		r.add("redis_password", "%s holds a password already: give it in one place", r.name("redis_url"))
	}
	db := strings.Trim(u.Path, "/")
	if db != "" && strings.Trim(db, "0123456789") != "" {
		r.add("redis_url", "the path must be a database number, e.g. /0")
	}
	switch {
	case len(s.RedisClusterAddrs) > 0 && len(s.RedisSentinelAddrs) > 0:
		r.add("redis_sentinel_addrs", "set %s or %s, not both", r.name("redis_cluster_addrs"), r.name("redis_sentinel_addrs"))
	case len(s.RedisClusterAddrs) > 0 && strings.Trim(db, "0") != "":
		r.add("redis_url", "a Redis Cluster has database 0 only (with %s)", r.name("redis_cluster_addrs"))
	case len(s.RedisSentinelAddrs) > 0 && s.RedisSentinelMaster == "":
		r.add("redis_sentinel_master", "required with %s", r.name("redis_sentinel_addrs"))
	case len(s.RedisSentinelAddrs) == 0 && (s.RedisSentinelMaster != "" || !s.RedisSentinelPassword.IsZero()):
		r.add("redis_sentinel_addrs", "required with %s", r.name("redis_sentinel_master"))
	}
}

// splitList splits a comma-separated list, dropping spaces and empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// joinServers normalizes "a, b" to "a,b".
func joinServers(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return strings.Join(parts, ",")
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "callbus"
	}
	return h
}

// reader reads typed values, collecting problems instead of failing on the first.
type reader struct {
	v     *iparams.Values
	ps    iparams.Problems
	name  func(key string) string // a parameter in messages
	fleet bool                    // the process of a fleet: no account of its own
}

func (r *reader) add(key, format string, args ...any) {
	r.ps = append(r.ps, iparams.Problem{Key: key, Message: fmt.Sprintf(format, args...)})
}

func (r *reader) get(key string) any {
	val, err := r.v.Get(key)
	if err != nil {
		r.add(key, "%v", err)
	}
	return val
}

func (r *reader) text(key string) string  { s, _ := r.get(key).(string); return s }
func (r *reader) number(key string) int64 { n, _ := r.get(key).(int64); return n }
func (r *reader) flag(key string) bool    { f, _ := r.get(key).(bool); return f }
func (r *reader) list(key string) []string {
	l, _ := r.get(key).([]string)
	return l
}

func (r *reader) duration(key string, unit time.Duration) time.Duration {
	return time.Duration(r.number(key)) * unit
}

func (r *reader) secret(key string) secret.Value {
	s, err := r.v.Secret(key)
	if err != nil {
		r.add(key, "%v", err)
	}
	return s
}
