package cursor

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

// errReplyShape reports a raw reply that is not what XRANGE answers.
var errReplyShape = errors.New("unexpected XRANGE reply")

// readXRange reads up to count events after the event after ("" from the start)
// from the outbox-shaped stream key, in XRANGEs of about as many entries as
// hold count events (perEntry), until it has count or the stream has no more:
// fewer than count only when Redis holds no more, as one XRANGE of events
// would.
func (s *Store) readXRange(ctx context.Context, key, after string, count int) (recs []event.Committed, ok bool, err error) {
	for {
		want := count - len(recs)
		per := max(s.perEntry.Load(), 1)
		n := int((int64(want) + per - 1) / per)
		page, entries, ok, err := s.readXRangeOnce(ctx, key, after, n)
		if err != nil || !ok {
			return nil, ok, err
		}
		if entries > 0 {
			// Events per entry: the page's, its first entry's skipped events left out.
			s.perEntry.Store(max(int64(len(page)/entries), 1))
		}
		if page, err = clip(page, after, want); err != nil {
			return nil, true, err
		}
		recs = append(recs, page...)
		if len(recs) >= count || entries < n || len(page) == 0 {
			return recs, true, nil
		}
		after = recs[len(recs)-1].StreamID
	}
}

// readXRangeOnce runs XRANGE key (after + COUNT count (from the start for after
// "") and decodes the raw reply itself (a go-redis RawWriteToCmd): go-redis's own
// reading makes a map and a string of every field of every entry, then the
// record copies the body again; here each body is a slice of the one reply
// buffer, and the subjects and types, which repeat, are made once a read. The
// buffer starts about as large as the last replies, so a backlog is read
// without growing it, and an idle outbox soon without a large one. It returns
// the events of the entries (all of them: see clip) and how many entries.
//
// ok is false, with no error, when the caller must read again with XRangeN: after
// an error reply (MOVED and ASK from a Redis Cluster among them, which only
// go-redis's own reading follows) and after a failed command (go-redis does not
// retry a command that wrote part of its reply out; XRangeN is retried).
func (s *Store) readXRangeOnce(ctx context.Context, key, after string, count int) (recs []event.Committed, entries int, ok bool, err error) {
	start := "-"
	if after != "" {
		start = "(" + after
	}
	// The slack keeps bytes.Buffer from doubling for the last few hundred bytes:
	// it wants 512 free before each read into it.
	hint := s.readHint.Load()
	buf := bytes.NewBuffer(make([]byte, 0, hint+hint/8+1024))
	cmd := redis.NewRawWriteToCmd(ctx, buf, "XRANGE", key, start, "+", "COUNT", count)
	if err := s.rdb.Process(ctx, cmd); err != nil {
		return nil, 0, false, nil
	}
	raw := buf.Bytes()
	s.readHint.Store(max(int64(len(raw)), hint-hint/4))
	if len(raw) > 0 && (raw[0] == '-' || raw[0] == '!') {
		return nil, 0, false, nil
	}
	recs, entries, err = decodeXRangeN(raw)
	return recs, entries, true, err
}

// decodeXRange decodes a raw XRANGE reply (RESP2 or RESP3: an array of entries,
// each its id and an array of field, value, ...) into records, a batch entry
// into one record per event. The records' Data
// share raw, which is not written to afterwards.
func decodeXRange(raw []byte) ([]event.Committed, error) {
	recs, _, err := decodeXRangeN(raw)
	return recs, err
}

// decodeXRangeN is decodeXRange that also returns how many entries it read.
func decodeXRangeN(raw []byte) ([]event.Committed, int, error) {
	recs, n, err := decodeEntries(raw)
	return recs, max(n, 0), err
}

func decodeEntries(raw []byte) ([]event.Committed, int, error) {
	rd := respReader{b: raw}
	n, err := rd.arrayLen()
	if err != nil {
		return nil, 0, err
	}
	recs := make([]event.Committed, 0, max(n, 0))
	known := map[string]string{} // subjects and types: a few, repeated across the batch
	intern := func(b []byte) string {
		if s, ok := known[string(b)]; ok {
			return s
		}
		s := string(b)
		known[s] = s
		return s
	}
	for range n {
		if k, err := rd.arrayLen(); err != nil || k != 2 {
			return nil, 0, fmt.Errorf("%w: entry of %d elements (%v)", errReplyShape, k, err)
		}
		id, err := rd.bulk()
		if err != nil {
			return nil, 0, err
		}
		var f entryFields
		var count, batch []byte // a batch entry's fields (outbox_batch.go)
		k, err := rd.arrayLen()
		if err != nil || k%2 != 0 {
			return nil, 0, fmt.Errorf("%w: entry %s of %d values (%v)", errReplyShape, id, k, err)
		}
		for range k / 2 {
			name, err := rd.bulk()
			if err != nil {
				return nil, 0, err
			}
			v, err := rd.bulk()
			if err != nil {
				return nil, 0, err
			}
			switch string(name) {
			case "id":
				f.id = string(v)
			case "subject":
				f.subject = intern(v)
			case "data":
				f.data = v
			case "headers":
				f.headers = v
			case "type":
				f.typ, f.hasType = events.Type(intern(v)), true
			case "time":
				f.at = string(v)
			case batchCountField:
				count = v
			case batchEventsField:
				batch = v
			}
		}
		if batch != nil {
			if recs, err = decodeBatch(recs, string(id), string(count), batch, intern); err != nil {
				return nil, 0, err
			}
			continue
		}
		if f.data == nil {
			f.data = []byte{} // as a missing field reads through go-redis
		}
		r, err := f.record(string(id))
		if err != nil {
			return nil, 0, err
		}
		recs = append(recs, r)
	}
	if len(rd.b) != 0 {
		return nil, 0, fmt.Errorf("%w: %d bytes after the last entry", errReplyShape, len(rd.b))
	}
	return recs, n, nil
}

// respReader reads RESP values off the front of b.
type respReader struct{ b []byte }

// line returns the next line's type byte and the rest of it, without CRLF.
func (r *respReader) line() (byte, []byte, error) {
	i := bytes.IndexByte(r.b, '\n')
	if i < 1 || r.b[i-1] != '\r' {
		return 0, nil, fmt.Errorf("%w: truncated", errReplyShape)
	}
	t, l := r.b[0], r.b[1:i-1]
	r.b = r.b[i+1:]
	return t, l, nil
}

// arrayLen reads an array's header: its length, -1 for a null array.
func (r *respReader) arrayLen() (int, error) {
	t, l, err := r.line()
	if err != nil {
		return 0, err
	}
	switch t {
	case '*':
		n, ok := respLen(l)
		if !ok {
			return 0, fmt.Errorf("%w: array length %q", errReplyShape, l)
		}
		return n, nil
	case '_':
		return -1, nil
	}
	return 0, fmt.Errorf("%w: %q where an array was expected", errReplyShape, t)
}

// bulk reads a string (bulk or simple); the result shares r's buffer, its
// capacity ending where it does.
func (r *respReader) bulk() ([]byte, error) {
	t, l, err := r.line()
	if err != nil {
		return nil, err
	}
	switch t {
	case '+':
		return l[:len(l):len(l)], nil
	case '$':
		n, ok := respLen(l)
		if !ok || n < 0 || len(r.b) < n+2 || r.b[n] != '\r' || r.b[n+1] != '\n' {
			return nil, fmt.Errorf("%w: string of length %q", errReplyShape, l)
		}
		v := r.b[:n:n]
		r.b = r.b[n+2:]
		return v, nil
	}
	return nil, fmt.Errorf("%w: %q where a string was expected", errReplyShape, t)
}

// respLen reads a length: decimal digits, or -1 (null).
func respLen(l []byte) (int, bool) {
	if string(l) == "-1" {
		return -1, true
	}
	if len(l) == 0 || len(l) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range l {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// clip returns the first count of recs after the entry after ("" for all): an
// XRANGE from "(after" returns the batch entry that holds after (whose own id is
// its last event's) with the events up to after in it, and up to count entries,
// which may hold more than count events.
func clip(recs []event.Committed, after string, count int) ([]event.Committed, error) {
	if after != "" {
		a, err := parseStreamID(after)
		if err != nil {
			return nil, err
		}
		skip := 0
		for skip < len(recs) {
			id, err := parseStreamID(recs[skip].StreamID)
			if err != nil {
				return nil, err
			}
			if id.compare(a) > 0 {
				break
			}
			skip++
		}
		recs = recs[skip:]
	}
	if len(recs) > count {
		clear(recs[count:]) // keeps no body
		recs = recs[:count]
	}
	return recs, nil
}
