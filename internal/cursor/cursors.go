package cursor

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// GetCursor returns the value of the named cursor and whether it is set. Cursors
// are written only by Commit.
func (s *Store) GetCursor(ctx context.Context, name string) (string, bool, error) {
	v, err := s.rdb.HGet(ctx, s.k.cursor, name).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cursor get %q: %w", name, err)
	}
	return v, true, nil
}

// Cursors returns every cursor of the account (an empty map when none is set).
func (s *Store) Cursors(ctx context.Context) (map[string]string, error) {
	m, err := s.rdb.HGetAll(ctx, s.k.cursor).Result()
	if err != nil {
		return nil, fmt.Errorf("cursor get all: %w", err)
	}
	return m, nil
}
