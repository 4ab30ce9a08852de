package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/callbus/callbus/config"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// connectRedis opens the Redis client (redis:// or rediss://, password from the
// configuration when set). It does not wait for the server: the store's calls fail
// and are retried while Redis is away.
func connectRedis(s config.Settings) (*redis.Client, error) {
	opt, err := redis.ParseURL(s.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	if !s.RedisPassword.IsZero() {
		opt.Password = s.RedisPassword.Reveal()
	}
	return redis.NewClient(opt), nil
}

// connectNATS connects to NATS, reconnecting forever: an outage leaves events in
// the outbox, never loses them.
func connectNATS(ctx context.Context, s config.Settings, log zerolog.Logger) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("callbus-" + s.Account),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn().Err(err).Msg("nats: disconnected")
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info().Str("server", nc.ConnectedUrlRedacted()).Msg("nats: reconnected") }),
	}
	if s.NATSCreds != "" {
		opts = append(opts, nats.UserCredentials(s.NATSCreds))
	}
	if s.NATSUser != "" {
		opts = append(opts, nats.UserInfo(s.NATSUser, s.NATSPassword.Reveal()))
	}
	if s.NATSTLSCA != "" {
		opts = append(opts, nats.RootCAs(s.NATSTLSCA))
	}
	nc, err := nats.Connect(strings.TrimSpace(s.NATSURL), opts...)
	if err != nil {
		return nil, fmt.Errorf("nats connect: %w", err)
	}
	return nc, nil
}

// drainNATS drains the connection: pending publishes go out before it closes.
func drainNATS(nc *nats.Conn, log zerolog.Logger) {
	if err := nc.Drain(); err != nil {
		log.Warn().Err(err).Msg("nats drain")
	}
}
