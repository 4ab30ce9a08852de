package service

import (
	"context"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/rs/zerolog"
)

// checkRedis refuses a Redis that evicts keys (cursor.ErrEvictingRedis) and
// warns loudly about one without persistence. Settings it cannot read (CONFIG
// disabled on managed Redis, Redis not up yet) are a warning, never a failure:
// the service must start while Redis is away.
func checkRedis(ctx context.Context, store *cursor.Store, log zerolog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := store.CheckConfig(ctx)
	if err != nil {
		log.Error().Err(err).Msg("redis: refused")
		return err
	}
	for _, w := range c.Warnings() {
		log.Error().Str("maxmemory_policy", c.MaxMemoryPolicy).Bool("appendonly", c.AppendOnly).
			Str("save", c.Save).Msg("redis: " + w)
	}
	return nil
}
