package service

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/callbus/callbus/config"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// connectRedis opens the Redis client: a single node (redis_url: redis:// or
// rediss://), a Redis Cluster (redis_cluster_addrs) or the primary Sentinel names
// (redis_sentinel_addrs, redis_sentinel_master). The URL's scheme (TLS), user,
// password, database and options apply to all three; the password from the
// configuration, when set, replaces the URL's. It does not wait for the server:
// the store's calls fail and are retried while Redis is away. The timeouts are
// those of redisTimeouts, and no call outlasts callBudget.
func connectRedis(s config.Settings) (redis.UniversalClient, error) {
	opt, err := redis.ParseURL(s.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	budget, err := redisTimeouts(opt, s.RedisURL, s.LeaseTTL)
	if err != nil {
		return nil, err
	}
	if !s.RedisPassword.IsZero() {
		opt.Password = s.RedisPassword.Reveal()
	}
	if opt.PoolSize == 0 { // the URL's pool_size, when given, stands
		opt.PoolSize = redisPoolSize
	}
	opt.ReadBufferSize, opt.WriteBufferSize = redisBufferSize, redisBufferSize
	if opt.TLSConfig != nil && (len(s.RedisClusterAddrs) > 0 || len(s.RedisSentinelAddrs) > 0) {
		// The URL's host is not a server here: each connection checks the
		// certificate against the host it dials.
		opt.TLSConfig = opt.TLSConfig.Clone()
		opt.TLSConfig.ServerName = ""
	}
	// Redis's own reason for a refused connection reaches the log (protected
	// mode), not only the EOF the client sees.
	withRefusalDialer(opt)
	var rdb redis.UniversalClient
	switch {
	case len(s.RedisClusterAddrs) > 0:
		rdb = redis.NewClusterClient(clusterOptions(opt, s.RedisClusterAddrs))
	case len(s.RedisSentinelAddrs) > 0:
		rdb = redis.NewFailoverClient(failoverOptions(opt, s))
	default:
		rdb = redis.NewClient(opt)
	}
	rdb.AddHook(callBudget(budget))
	return rdb, nil
}

// redisPoolSize is how many connections the process's Redis client may open
// (go-redis's default is 10 per core, 20 on 2 cores). Every account of a fleet
// replica calls Redis several times a poll cycle, one round trip per connection
// at a time: at 2,000 accounts on 2 cores, 20 connections left 5,000 goroutines
// waiting for one, and the waits used up the calls' budget (lease renewals
// failed). A connection is opened only when the calls in flight need it.
const redisPoolSize = 200

// redisBufferSize is each pooled connection's read and write buffer: go-redis's
// default, 32 KiB each, made a fleet replica's pool of some 200 connections the
// largest part of its heap (20 MB, a fifth of it at 300 accounts). callbus's
// commands and replies are mostly far smaller; a larger one is only read or
// written in more system calls. Pipelines keep their own pool's larger buffers.
const redisBufferSize = 8 << 10

// clusterOptions are the Cluster client's options: the seed nodes, with the
// parsed URL's credentials, TLS and timeouts (the URL's host is not used).
func clusterOptions(o *redis.Options, addrs []string) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs: addrs, Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig, Dialer: o.Dialer,
		ClientName: o.ClientName, Protocol: o.Protocol,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		ContextTimeoutEnabled: o.ContextTimeoutEnabled,
		PoolSize:              o.PoolSize, MinIdleConns: o.MinIdleConns, MaxRetries: o.MaxRetries,
		ReadBufferSize: o.ReadBufferSize, WriteBufferSize: o.WriteBufferSize,
	}
}

// failoverOptions are the Sentinel client's options: the Sentinels and the
// primary's name, with the parsed URL's credentials, database, TLS and timeouts.
func failoverOptions(o *redis.Options, s config.Settings) *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName: s.RedisSentinelMaster, SentinelAddrs: s.RedisSentinelAddrs,
		SentinelPassword: s.RedisSentinelPassword.Reveal(),
		Username:         o.Username, Password: o.Password, DB: o.DB, TLSConfig: o.TLSConfig, Dialer: o.Dialer,
		ClientName: o.ClientName, Protocol: o.Protocol,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		ContextTimeoutEnabled: o.ContextTimeoutEnabled,
		PoolSize:              o.PoolSize, MinIdleConns: o.MinIdleConns, MaxRetries: o.MaxRetries,
		ReadBufferSize: o.ReadBufferSize, WriteBufferSize: o.WriteBufferSize,
	}
}

// connectNATS connects to NATS, reconnecting forever: an outage leaves events in
// the outbox, never loses them.
func connectNATS(ctx context.Context, s config.Settings, log zerolog.Logger) (*nats.Conn, error) {
	name := "callbus-" + s.Account
	if s.Account == "" { // a fleet member: its accounts share the connection
		name = "callbus-" + s.InstanceID
	}
	opts := append([]nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
	}, NATSLogOptions(log)...)
	opts = append(opts, natsKeepalive(s.LeaseTTL)...)
	nc, err := nats.Connect(strings.TrimSpace(s.NATSURL), append(opts, natsAuth(s)...)...)
	if err != nil {
		return nil, fmt.Errorf("nats connect: %w", err)
	}
	return nc, nil
}

// natsAuth are the options of s's NATS credentials and TLS roots.
func natsAuth(s config.Settings) []nats.Option {
	var opts []nats.Option
	if s.NATSCreds != "" {
		opts = append(opts, nats.UserCredentials(s.NATSCreds))
	}
	if s.NATSUser != "" {
		opts = append(opts, nats.UserInfo(s.NATSUser, s.NATSPassword.Reveal()))
	}
	if s.NATSTLSCA != "" {
		opts = append(opts, nats.RootCAs(s.NATSTLSCA))
	}
	return opts
}

// NATSLogOptions route what a NATS connection reports on its own (asynchronous
// errors such as a slow consumer or a permission violation, disconnects,
// reconnects, a server entering lame-duck mode, the connection closing) into log,
// so that nothing of it is lost or printed outside the logger.
func NATSLogOptions(log zerolog.Logger) []nats.Option {
	return []nats.Option{
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			ev := log.Warn().Err(err)
			if sub != nil {
				ev = ev.Str("subject", sub.Subject)
			}
			ev.Msg("nats: asynchronous error")
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn().Err(err).Msg("nats: disconnected")
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info().Str("server", nc.ConnectedUrlRedacted()).Msg("nats: reconnected") }),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { log.Debug().Err(err).Msg("nats: reconnect attempt failed") }),
		nats.LameDuckModeHandler(func(nc *nats.Conn) {
			log.Warn().Str("server", nc.ConnectedUrlRedacted()).Msg("nats: server entering lame-duck mode; moving to another")
		}),
	}
}

// redisLog is the go-redis logger that RouteDriverLogs installs.
type redisLog struct {
	log *atomic.Pointer[zerolog.Logger]
}

func (r redisLog) Printf(_ context.Context, format string, v ...any) {
	if l := r.log.Load(); l != nil {
		l.Warn().Str("component", "redis").Msg(fmt.Sprintf(format, v...))
	}
}

var redisLogger atomic.Pointer[zerolog.Logger]

// RouteDriverLogs sends what go-redis prints on its own (failed dials of its
// pool, …) to log instead of plain text on stderr. go-redis has one logger per
// process (redis.SetLogger), so the last call wins; a process that runs one
// service calls it once, before it opens any client. It is safe for concurrent
// use.
func RouteDriverLogs(log zerolog.Logger) {
	redisLogger.Store(&log)
	redis.SetLogger(redisLog{&redisLogger})
}

// drainNATS drains the connection: pending publishes go out before it closes.
func drainNATS(nc *nats.Conn, log zerolog.Logger) {
	if err := nc.Drain(); err != nil {
		log.Warn().Err(err).Msg("nats drain")
	}
}

// natsAdvice names the NATS servers of nc (without credentials) and what to check
// when a JetStream call failed with err: the servers unreachable, JetStream off,
// or the stream itself (settings or permissions).
func natsAdvice(nc *nats.Conn, err error) (servers, advice string) {
	var urls []string
	for _, u := range nc.Servers() {
		urls = append(urls, redactURL(u))
	}
	servers = strings.Join(urls, ",")
	switch {
	case !nc.IsConnected():
		return servers, "no NATS server answers at " + servers + ": check that nats-server runs there and CALLBUS_NATS_URL (and its credentials)"
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return servers, "the NATS server at " + servers + " runs without JetStream: start nats-server with -js (or jetstream {} in its configuration)"
	}
	return servers, "NATS answers at " + servers + " but the stream cannot be used: check the stream's settings and the user's permissions"
}

// redactURL leaves a URL's password out; a value that is not a URL is kept as it is.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Redacted()
}
