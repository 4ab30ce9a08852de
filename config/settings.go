package config

import (
	"slices"
	"time"

	"github.com/callbus/callbus/internal/policy"
	"github.com/callbus/callbus/internal/secret"
)

// Settings is the poller's validated configuration, in the units the code uses.
// Secrets are secret.Value: put the API key in a request with APIKey.SetHeader and
// hand passwords to drivers with Reveal, nothing else.
type Settings struct {
	// APIURL is the API base URL without /api/v1 and without a trailing slash:
	// api_url, or https://<api_domain>.<domain> when only api_domain is set.
	APIURL     string
	APIKey     secret.Value
	APITimeout time.Duration // one request, retries aside
	Account    string        // a NATS subject token; "" for the process of a fleet

	// AccountsDir is the directory of account files of a fleet, "" for one
	// account. With it, Load leaves account, api_key and api_url unset when the
	// process does not give them: each account file does (ReadAccountFile).
	AccountsDir string

	NATSURL      string // one or more server URLs, comma-separated without spaces
	NATSCreds    string // path of a .creds file, or ""
	NATSUser     string
	NATSPassword secret.Value
	NATSTLSCA    string // path of a PEM CA file, or ""

	RedisURL      string // redis:// or rediss://
	RedisPassword secret.Value
	// RedisClusterAddrs are a Redis Cluster's seed nodes (host:port): callbus
	// then connects to the Cluster, with RedisURL's scheme and user.
	RedisClusterAddrs []string
	// RedisSentinelAddrs (host:port) and RedisSentinelMaster name a primary
	// managed by Sentinel, reached with RedisURL's scheme, user and database.
	RedisSentinelAddrs    []string
	RedisSentinelMaster   string
	RedisSentinelPassword secret.Value // the Sentinels' own, or empty

	SubjectPrefix, StreamName string
	StreamMaxAge              time.Duration
	StreamDuplicates          time.Duration // the JetStream duplicate window, ≤ StreamMaxAge
	StreamReplicas            int

	RateLimitShare float64 // the share of the account's rate limit to use, in (0, 1]

	CallsInterval        time.Duration // target intervals, stretched under the rate budget
	OpenCallsInterval    time.Duration
	MetricsInterval      time.Duration
	MetricsLookback      time.Duration // > MetricsInterval
	CallsBackfill        time.Duration // how far back the first calls read reaches
	ExportBackfillAbove  time.Duration // a larger CallsBackfill is read through the export; 0: never
	UsersInterval        time.Duration
	TeamsInterval        time.Duration
	UserStatusesInterval time.Duration
	PollIntervalFloor    time.Duration // intervals shrink toward it when the budget has room

	// Resources is a non-empty subset of the options of the resources parameter,
	// in their declared order. The names are the poller's (poll.ResCalls, …);
	// config does not repeat them.
	Resources []string

	// DataPolicy is the account's data policy (data_policy, data_policy_fields,
	// data_policy_events, data_policy_hash_key): nil keeps everything and wants
	// every event type.
	DataPolicy *policy.Policy

	LogLevel        string // debug, info, warn or error
	LogFormat       string // json or console
	HTTPAddr        string // host:port of /healthz, /readyz, /metrics
	DebugPprof      bool   // serve /debug/pprof/ on HTTPAddr too
	LeaseTTL        time.Duration
	OutboxMaxEvents int64 // polling pauses while the outbox holds this many events
	// EventVersions is all, newest or oldest: which versions of a type with
	// several are published (event.VersionChoice).
	EventVersions string
	// WatermarkInterval is how often the leader commits account.watermark.
	WatermarkInterval time.Duration
	InstanceID        string // the host name unless set
	ShutdownTimeout   time.Duration
}

// Polls reports whether resource (a resources option, e.g. poll.ResCalls) is to be polled.
func (s Settings) Polls(resource string) bool { return slices.Contains(s.Resources, resource) }
