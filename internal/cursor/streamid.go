package cursor

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// streamID is a Redis stream entry id, "<ms>-<seq>".
type streamID struct{ ms, seq uint64 }

// parseStreamID accepts the full form "<ms>-<seq>" only: a bare "<ms>" means
// different things to different stream commands.
func parseStreamID(s string) (streamID, error) {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok {
		return streamID{}, fmt.Errorf("%w: stream id %q: want <ms>-<seq>", ErrInvalid, s)
	}
	m, err1 := strconv.ParseUint(ms, 10, 64)
	q, err2 := strconv.ParseUint(seq, 10, 64)
	if err1 != nil || err2 != nil {
		return streamID{}, fmt.Errorf("%w: stream id %q: want <ms>-<seq>", ErrInvalid, s)
	}
	return streamID{m, q}, nil
}

func (id streamID) String() string {
	return strconv.FormatUint(id.ms, 10) + "-" + strconv.FormatUint(id.seq, 10)
}

// compare orders id and o as Redis does: by time, then sequence (-1, 0, +1).
func (id streamID) compare(o streamID) int {
	if c := cmp.Compare(id.ms, o.ms); c != 0 {
		return c
	}
	return cmp.Compare(id.seq, o.seq)
}

// next is the smallest id after id.
func (id streamID) next() streamID {
	if id.seq == math.MaxUint64 {
		return streamID{id.ms + 1, 0}
	}
	return streamID{id.ms, id.seq + 1}
}

// time is when Redis added the entry, by the Redis server's clock.
func (id streamID) time() time.Time { return time.UnixMilli(int64(id.ms)) }
