package backfill

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
)

// sink receives the records of one pass, one at a time, with their position in
// the pass (counted over the pass's resources, in report order).
type sink interface {
	call(pos int64, c events.Call) error
	metric(pos int64, m events.CallMetric) error
	user(pos int64, u events.User) error
	team(pos int64, t events.Team) error
	// skip passes over the record at pos: rejected, or an older copy of a record
	// the report lists again.
	skip(pos int64)
}

// passReader reads the passes of one report as the live client reads a list
// page: each record decoded and checked on its own (callcenter.DecodeRecord), a
// bad one rejected alone (counted and logged through the client's rejection
// hook, by id, field and reason) while the rest go on.
type passReader struct {
	api   *callcenter.Client
	op    string   // names the report in rejections ("export job 12 report")
	want  []string // the resources the job exported; others are skipped
	older dupes    // copies of records listed again, passed over
	from  int64    // positions before it were committed by an earlier run
}

// read streams the records of pass to s: one record in memory at a time,
// whatever the report's size. Resources of the other pass, or not requested,
// are skipped element by element; unknown keys are skipped whole. A report that
// is not JSON, or breaks off, fails with a *reportError; an error of s is
// returned as it is.
func (pr *passReader) read(r io.Reader, pass int, s sink) error {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return badReport("want a JSON object, got %v (%v)", tok, err)
	}
	var pos int64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return badReport("%w", err)
		}
		key, _ := tok.(string)
		if !slices.Contains(pr.want, key) || passOf(key) != pass {
			if err := skipValue(dec); err != nil {
				return badReport("%s: %w", key, err)
			}
			continue
		}
		err = eachElement(dec, key, func(raw json.RawMessage) error {
			p := pos
			pos++
			switch {
			case p < pr.from:
				return nil
			case pr.older.has(pass, p):
				s.skip(p)
				return nil
			}
			return pr.record(key, p, raw, s)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// record decodes one record of resource key and hands it to s, or passes over it
// when it is rejected.
func (pr *passReader) record(key string, pos int64, raw json.RawMessage, s sink) error {
	switch key {
	case callcenter.ExportCalls:
		return decoded(pr, key, pos, raw, s, s.call)
	case callcenter.ExportCallMetrics:
		return decoded(pr, key, pos, raw, s, s.metric)
	case callcenter.ExportUsers:
		return decoded(pr, key, pos, raw, s, s.user)
	default:
		return decoded(pr, key, pos, raw, s, s.team)
	}
}

func decoded[T any](pr *passReader, key string, pos int64, raw json.RawMessage, s sink, fn func(int64, T) error) error {
	var v T
	if !callcenter.DecodeRecord(pr.api, pr.op, key, raw, &v) {
		s.skip(pos)
		return nil
	}
	return fn(pos, v)
}

// eachElement calls each with every element of the array that comes next (null
// counts as empty). What cannot be read is a *reportError; each's errors are
// returned as they are.
func eachElement(dec *json.Decoder, key string, each func(json.RawMessage) error) error {
	tok, err := dec.Token()
	if err != nil {
		return badReport("%s: %w", key, err)
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return badReport("%s: want an array, got %v", key, tok)
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return badReport("%s: %w", key, err)
		}
		if err := each(raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return badReport("%s: %w", key, err)
	}
	return nil
}

// skipValue reads the next value whole: an array element by element, anything
// else token by token, so a large value costs no memory.
func skipValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == json.Delim('[') {
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	for depth := delimDepth(tok); depth > 0; {
		if tok, err = dec.Token(); err != nil {
			return err
		}
		depth += delimDepth(tok)
	}
	return nil
}

// delimDepth is how a token changes the nesting depth.
func delimDepth(tok json.Token) int {
	switch tok {
	case json.Delim('{'), json.Delim('['):
		return 1
	case json.Delim('}'), json.Delim(']'):
		return -1
	}
	return 0
}
