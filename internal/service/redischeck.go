package service

import (
	"context"
	"strings"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/rs/zerolog"
)

// checkRedis refuses a Redis that evicts keys (cursor.ErrEvictingRedis) and
// warns about one without persistence, at level (loudly, but for the demo). No
// Redis answering at all is an error naming target. Settings it cannot read (CONFIG
// disabled on managed Redis, Redis not up yet) are a warning, never a failure:
// the service must start while Redis is away.
func checkRedis(ctx context.Context, store *cursor.Store, target string, log zerolog.Logger, level zerolog.Level) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := store.CheckConfig(ctx)
	if err != nil {
		log.Error().Err(err).Str("redis", target).Msg("redis: refused")
		return err
	}
	for _, w := range c.Warnings() {
		if c.Unreachable != "" {
			log.Error().Str("redis", target).Msg("redis: " + w)
			continue
		}
		log.WithLevel(level).Str("redis", target).Str("maxmemory_policy", c.MaxMemoryPolicy).Bool("appendonly", c.AppendOnly).
			Str("save", c.Save).Msg("redis: " + w)
	}
	return nil
}

// redisTarget names the Redis the settings point at, for logs: the URL without
// its password, or the Cluster's or the Sentinels' addresses.
func redisTarget(s config.Settings) string {
	switch {
	case len(s.RedisClusterAddrs) > 0:
		return "cluster " + strings.Join(s.RedisClusterAddrs, ",")
	case len(s.RedisSentinelAddrs) > 0:
		return "sentinels " + strings.Join(s.RedisSentinelAddrs, ",") + " (primary " + s.RedisSentinelMaster + ")"
	}
	return redactURL(s.RedisURL)
}
