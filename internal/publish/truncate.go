package publish

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/callbus/callbus/internal/event"
)

// errCannotFit reports a body that stays too large with every list emptied and
// every long string cut: the relay cannot publish it in any form.
var errCannotFit = errors.New("the event does not fit even with its lists and long strings cut")

// minCutString is the shortest string fit cuts: shorter ones are ids, times,
// enum values, whose prefix would not be valid.
const minCutString = 256

// cuttable is one list or long string of an event's data that fit may shorten.
type cuttable struct {
	ptr  string         // JSON pointer into data
	n    int            // original length: elements, or bytes of a string
	size int            // encoded size, to cut the largest first
	set  func(keep int) // keeps the first keep elements (bytes of a string)
	kept int
}

// fit returns body (a CloudEvents envelope in JSON) reduced to at most limit
// bytes, and the marker it added (event.Truncation): the largest lists of data
// (and strings of minCutString bytes or more) are cut to the longest prefix that
// fits, largest first, each keeping one element as long as some other cut can
// make room.
// The envelope's attributes are kept; it is re-encoded, so key order may change.
// It returns errCannotFit when no such cut fits.
func fit(body []byte, limit int) ([]byte, event.Truncation, error) {
	mark := event.Truncation{OriginalSize: int64(len(body))}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay as written
	var env map[string]any
	if err := dec.Decode(&env); err != nil {
		return nil, mark, fmt.Errorf("decode the envelope to cut it: %w", err)
	}
	var cuts []*cuttable
	collect(env["data"], "", &cuts)
	// Largest first, so the fewest values are cut; by pointer among equals, so
	// the same body is always cut the same way.
	slices.SortFunc(cuts, func(a, b *cuttable) int { return cmp.Or(b.size-a.size, strings.Compare(a.ptr, b.ptr)) })
	encode := func() ([]byte, error) {
		mark.Truncated = marker(cuts)
		env[event.AttrTruncated] = mark.Truncated
		env[event.AttrOriginalSize] = mark.OriginalSize
		return json.Marshal(env)
	}
	// First every list keeps at least one element (several schemas require one),
	// then, if that is not enough, any may be emptied.
	for _, floor := range []int{1, 0} {
		for _, c := range cuts {
			if b, ok, err := c.shortest(min(floor, c.kept), encode, limit); ok || err != nil {
				return b, mark, err
			}
		}
	}
	return nil, mark, errCannotFit
}

// shortest cuts c to the longest prefix of at least lo (and at most what it
// keeps now) with which the encoded body fits into limit, by bisection; when none
// fits it leaves c at lo and returns false.
func (c *cuttable) shortest(lo int, encode func() ([]byte, error), limit int) ([]byte, bool, error) {
	hi := c.kept
	for lo < hi {
		mid := (lo + hi + 1) / 2
		c.set(mid)
		b, err := encode()
		if err != nil {
			return nil, false, err
		}
		if len(b) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	c.set(lo)
	b, err := encode()
	return b, err == nil && len(b) <= limit, err
}

// marker is the value of callbustruncated: each value cut, in pointer order.
func marker(cuts []*cuttable) string {
	var parts []string
	for _, c := range cuts {
		if c.kept < c.n {
			parts = append(parts, c.ptr+"="+strconv.Itoa(c.n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

// collect finds the lists and long strings of v reachable through objects (a
// list inside a list is cut with its parent), with their JSON pointers.
func collect(v any, ptr string, out *[]*cuttable) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, child := range obj {
		p := ptr + "/" + pointerEscape.Replace(k)
		switch c := child.(type) {
		case map[string]any:
			collect(c, p, out)
		case []any:
			enc, _ := json.Marshal(c) // decoded JSON always encodes
			cut := &cuttable{ptr: p, n: len(c), size: len(enc), kept: len(c)}
			cut.set = func(keep int) { obj[k] = c[:keep]; cut.kept = keep }
			*out = append(*out, cut)
		case string:
			if len(c) >= minCutString {
				cut := &cuttable{ptr: p, n: len(c), size: len(c), kept: len(c)}
				cut.set = func(keep int) {
					for keep > 0 && keep < len(c) && !utf8.RuneStart(c[keep]) {
						keep-- // never split a character
					}
					obj[k] = c[:keep]
					cut.kept = keep
				}
				*out = append(*out, cut)
			}
		}
	}
}
