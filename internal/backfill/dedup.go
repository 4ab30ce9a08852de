package backfill

import (
	"cmp"
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

// layout is the order of the requested resources in a report.
type layout []string

// inOrder reports whether every resource of pass 0 comes before those of pass
// 1, so that one read serves both passes.
func (l layout) inOrder() bool {
	seen1 := false
	for _, key := range l {
		if passOf(key) == 1 {
			seen1 = true
		} else if seen1 {
			return false
		}
	}
	return true
}

// findDupes reads the report once and returns the positions of the records
// whose id (call_id for call metrics) is listed again in the same resource,
// except the newest copy of each: the one with the latest updated_time (for a
// call, the API moves it with every change of the call or its participants),
// and of those the last in the report. Users and teams carry no updated_time:
// their last copy wins. A record whose id cannot be read is left to the pass,
// which rejects it. It holds 24 bytes per record of the report while it reads.
// It also returns the report's layout.
func findDupes(r io.Reader, want []string) (d dupes, n int, lay layout, err error) {
	copies := map[string][]copyOf{}
	var pos [2]int64
	sc := newScanner(r)
	err = sc.object(func(key string) error {
		if !slices.Contains(want, key) {
			_, err := sc.value(false)
			return err
		}
		lay = append(lay, key)
		pass := passOf(key)
		cs := copies[key]
		err := sc.array(key, func(raw []byte) error {
			c := copyOf{pos: pos[pass]}
			pos[pass]++
			var mod time.Time
			_ = apijson.Object(key, raw, apijson.Key(idKey(key), apijson.Int(&c.id)), apijson.Key("updated_time", apijson.Time(&mod)))
			if c.id > 0 {
				if !mod.IsZero() {
					c.mod = mod.UnixNano()
				}
				cs = append(cs, c)
			}
			return nil
		})
		copies[key] = cs
		return err
	})
	if err != nil {
		return d, 0, nil, err
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
	return d, n, lay, nil
}
