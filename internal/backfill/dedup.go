package backfill

import (
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

// dupes are, per pass, the positions of records the report lists again: each
// record is announced once, from its newest copy.
type dupes [2]map[int64]bool

func (d dupes) has(pass int, pos int64) bool { return d[pass][pos] }

// copyOf is one record of the report as the duplicate check sees it.
type copyOf struct {
	id  int64
	mod int64 // updated_time, Unix nanoseconds (0: none or unreadable)
	pos int64 // in its pass
}

// findDupes reads the report once and returns the positions of the records
// whose id (call_id for call metrics) is listed again in the same resource,
// except the newest copy of each: the one with the latest updated_time (for a
// call, the API moves it with every change of the call or its participants),
// and of those the last in the report. Users and teams carry no updated_time:
// their last copy wins. A record whose id cannot be read is left to the pass,
// which rejects it. It holds 24 bytes per record of the report while it reads.
func findDupes(r io.Reader, want []string) (d dupes, n int, err error) {
	copies := map[string][]copyOf{}
	var pos [2]int64
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return d, 0, badReport("want a JSON object, got %v (%v)", tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return d, 0, badReport("%w", err)
		}
		key, _ := tok.(string)
		if !slices.Contains(want, key) {
			if err := skipValue(dec); err != nil {
				return d, 0, badReport("%s: %w", key, err)
			}
			continue
		}
		pass := passOf(key)
		err = eachElement(dec, key, func(raw json.RawMessage) error {
			c := copyOf{pos: pos[pass]}
			pos[pass]++
			var mod time.Time
			_ = apijson.Object(key, raw, apijson.Key(idKey(key), apijson.Int(&c.id)), apijson.Key("updated_time", apijson.Time(&mod)))
			if c.id > 0 {
				if !mod.IsZero() {
					c.mod = mod.UnixNano()
				}
				copies[key] = append(copies[key], c)
			}
			return nil
		})
		if err != nil {
			return d, 0, err
		}
	}
	for key, cs := range copies {
		slices.SortFunc(cs, func(a, b copyOf) int {
			return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.mod, b.mod), cmp.Compare(a.pos, b.pos))
		})
		pass := passOf(key)
		for i := 1; i < len(cs); i++ {
			if cs[i].id != cs[i-1].id {
				continue
			}
			if d[pass] == nil {
				d[pass] = map[int64]bool{}
			}
			d[pass][cs[i-1].pos] = true // sorted: the newest copy comes last
			n++
		}
	}
	return d, n, nil
}
