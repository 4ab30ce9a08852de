package cursor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// OutboxLastID returns the id of the newest entry ever appended to the outbox
// (its last-generated id, kept across trims), or "0-0" when the outbox does not
// exist: a Redis that lost its data. The stream's newest Callbus-Outbox-Id past it
// means Redis went back in time (see CompareStreamIDs).
func (s *Store) OutboxLastID(ctx context.Context) (string, error) {
	info, err := s.rdb.XInfoStream(ctx, s.k.outbox).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return "0-0", nil
		}
		return "", fmt.Errorf("cursor outbox last id: %w", err)
	}
	return info.LastGeneratedID, nil
}

// CompareStreamIDs compares two Redis stream ids "<ms>-<seq>" (-1, 0, +1); ""
// counts as "0-0". It fails with ErrInvalid on a malformed id.
func CompareStreamIDs(a, b string) (int, error) {
	x, err1 := parseOrZero(a)
	y, err2 := parseOrZero(b)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return x.compare(y), nil
}

func parseOrZero(s string) (streamID, error) {
	if s == "" {
		return streamID{}, nil
	}
	return parseStreamID(s)
}

// StreamIDTime is when Redis appended the entry with id "<ms>-<seq>", by the Redis
// server's clock; the zero time for "" or "0-0".
func StreamIDTime(id string) (time.Time, error) {
	x, err := parseOrZero(id)
	if err != nil || x.ms == 0 {
		return time.Time{}, err
	}
	return x.time(), nil
}
