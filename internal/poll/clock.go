package poll

import (
	"slices"
	"time"
)

// clockWitnesses is how many different calls must show a time ahead of the wall
// clock before the poller believes the API's present is there.
const clockWitnesses = 3

// maxAhead is how far ahead of the wall clock the API's present may ever be taken
// to be: a simulator may run days ahead in a demo; records dated further are
// broken data, however many agree.
const maxAhead = 7 * 24 * time.Hour

// apiClock follows the API's present when it runs ahead of the wall clock (a
// simulator at speed > 1), without letting any one record move it: it keeps the
// newest time of the clockWitnesses calls seen with the newest times, and the
// present it reports is the oldest of those, a time that at least that many
// different calls reached. A call dated days ahead (one record lying, or broken)
// is one witness; it moves nothing. Not safe for concurrent use (the poller's
// cycles run one at a time).
type apiClock struct {
	top []witness // newest first, distinct calls, at most clockWitnesses
}

type witness struct {
	call int64
	at   time.Time
}

// saw records that the API dated something of call id at t (its updated_time, or
// its metric's). Times beyond maxAhead of wall are ignored.
func (c *apiClock) saw(id int64, t, wall time.Time) {
	if t.IsZero() || !t.Before(wall.Add(maxAhead)) {
		return
	}
	i := slices.IndexFunc(c.top, func(w witness) bool { return w.call == id })
	switch {
	case i >= 0:
		c.top[i].at = maxTime(c.top[i].at, t)
	case len(c.top) < clockWitnesses:
		c.top = append(c.top, witness{id, t})
	case t.After(c.top[len(c.top)-1].at):
		c.top[len(c.top)-1] = witness{id, t}
	default:
		return
	}
	slices.SortFunc(c.top, func(a, b witness) int { return b.at.Compare(a.at) })
}

// present is the time at least clockWitnesses calls reached (zero until that many
// were seen).
func (c *apiClock) present() time.Time {
	if len(c.top) < clockWitnesses {
		return time.Time{}
	}
	return c.top[len(c.top)-1].at
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
