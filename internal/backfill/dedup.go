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

// copyOf is one copy of a record the report lists more than once.
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

// listedAgain are, per resource, the ids (call_id for call metrics) a report
// lists more than once.
type listedAgain map[string]map[int64]bool

// reportIndex is what a first read of a report finds (indexReport).
type reportIndex struct {
	layout layout
	again  listedAgain
}

// indexReport reads a report once for its layout and the ids it lists more
// than once. It holds about a byte or two per record of the resource being read
// (its id, in an idSet), and the ids found again once the resource is read:
// usually none.
func indexReport(r io.Reader, want []string) (reportIndex, error) {
	idx := reportIndex{again: listedAgain{}}
	sc := newScanner(r)
	err := sc.object(func(key string) error {
		if !slices.Contains(want, key) {
			_, err := sc.value(false)
			return err
		}
		idx.layout = append(idx.layout, key)
		var ids idSet
		// The scanner notes each record's id as it passes over it; a decoder
		// reads the few it cannot (scanner.idKey).
		sc.idKey = []byte(idKey(key))
		defer func() { sc.idKey = nil }()
		err := sc.array(key, func(raw []byte) error {
			id := sc.id.id // 0 when not ok
			if !sc.id.ok {
				_ = apijson.Object(key, raw, apijson.Key(idKey(key), apijson.Int(&id)))
			}
			if id > 0 {
				ids.add(id)
			}
			return nil
		})
		if again := ids.listedAgain(); len(again) > 0 {
			idx.again[key] = again
		}
		return err
	})
	return idx, err
}

// olderCopies reads a report for the copies of the records it lists more than
// once (again) and returns the positions of all but the newest copy of each:
// the one with the latest updated_time (for a call, the API moves it with every
// change of the call or its participants), and of those the last in the
// report. Users and teams carry no updated_time: their last copy wins. A record
// whose id cannot be read is left to the pass, which rejects it.
func olderCopies(r io.Reader, want []string, again listedAgain) (d dupes, n int, err error) {
	copies := map[string][]copyOf{}
	var pos [2]int64
	sc := newScanner(r)
	err = sc.object(func(key string) error {
		if !slices.Contains(want, key) {
			_, err := sc.value(false)
			return err
		}
		pass := passOf(key)
		return sc.array(key, func(raw []byte) error {
			c := copyOf{pos: pos[pass]}
			pos[pass]++
			if len(again[key]) == 0 {
				return nil
			}
			var mod time.Time
			_ = apijson.Object(key, raw, apijson.Key(idKey(key), apijson.Int(&c.id)), apijson.Key("updated_time", apijson.Time(&mod)))
			if again[key][c.id] {
				if !mod.IsZero() {
					c.mod = mod.UnixNano()
				}
				copies[key] = append(copies[key], c)
			}
			return nil
		})
	})
	if err != nil {
		return d, 0, err
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

// findDupes returns the positions of the older copies of the records the report
// lists more than once (see olderCopies), from the report's index: the report
// is read again (open) only when it lists some record more than once.
func findDupes(open func() (io.ReadCloser, error), want []string, idx reportIndex) (d dupes, n int, err error) {
	if len(idx.again) == 0 {
		return d, 0, nil
	}
	rc, err := open()
	if err != nil {
		return d, 0, err
	}
	defer rc.Close()
	return olderCopies(rc, want, idx.again)
}
