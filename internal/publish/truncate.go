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

	"github.com/callbus/callbus/internal/event"
)

// errCannotFit reports a limit smaller than the event's envelope with its data
// emptied (the last-resort form): no form of the event can be published under it,
// which is a misconfigured max_payload or max_msg_size, not an event to cut.
var errCannotFit = errors.New("the event does not fit even with its data emptied (raise the server's max_payload or the stream's max_msg_size)")

// fit returns body (a CloudEvents envelope in JSON) reduced to at most limit
// bytes, and the marker it added (event.Truncation). It cuts in this order,
// stopping at the first step that fits, so that each event keeps as much as the
// limit allows and stays valid against its schema:
//
//  1. lists alone (at any depth), largest first, each to the longest prefix that
//     fits and never below one element (several schemas require one: the changes
//     of a call.updated), when keeping one element of each is enough;
//  2. long strings alone (minCutString bytes or more, at any depth, list
//     elements included), all cut to one common length, the largest that fits:
//     the longest strings lose most and the room up to the limit is used;
//  3. both: lists as in 1 with the long strings emptied, then the strings get
//     back the room that is left, as in 2;
//  4. the last resort, when the event does not fit with every list at one
//     element and every long string emptied: data becomes {} and the marker is
//     "=<bytes of the original data>" (docs/operations.md, Operations notes).
//
// The envelope's attributes are kept; it is re-encoded, so key order may change.
// It returns errCannotFit when even the last-resort form is over the limit.
func fit(body []byte, limit int) ([]byte, event.Truncation, error) {
	mark := event.Truncation{OriginalSize: int64(len(body))}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay as written
	var env map[string]any
	if err := dec.Decode(&env); err != nil {
		return nil, mark, fmt.Errorf("decode the envelope to cut it: %w", err)
	}
	r := &reducer{env: env, mark: &mark, limit: limit}
	collect(env["data"], "", nil, 0, &r.cuts)
	// Largest first, so the fewest values are cut (a list before the lists in
	// its elements); by pointer among equals, so the same body is always cut the
	// same way.
	slices.SortFunc(r.cuts, func(a, b *cuttable) int { return cmp.Or(b.size-a.size, strings.Compare(a.ptr, b.ptr)) })
	for _, c := range r.cuts {
		if c.list {
			r.lists = append(r.lists, c)
		} else {
			r.strs = append(r.strs, c)
		}
	}
	for _, step := range []func() ([]byte, bool, error){r.listsAlone, r.stringsAlone, r.both} {
		if b, ok, err := step(); ok || err != nil {
			return b, mark, err
		}
	}
	return r.lastResort(body)
}

// reducer holds one body being cut and its cuttable values.
type reducer struct {
	env   map[string]any
	mark  *event.Truncation
	limit int
	cuts  []*cuttable // lists and strings, largest first
	lists []*cuttable
	strs  []*cuttable
}

// encode writes the body as cut now, with its marker.
func (r *reducer) encode() ([]byte, error) {
	r.mark.Truncated = marker(r.cuts)
	r.env[event.AttrTruncated] = r.mark.Truncated
	r.env[event.AttrOriginalSize] = r.mark.OriginalSize
	return json.Marshal(r.env)
}

// fits encodes the body and tells whether it is within the limit.
func (r *reducer) fits() ([]byte, bool, error) {
	b, err := r.encode()
	return b, err == nil && len(b) <= r.limit, err
}

// setAll sets every cuttable of cs to keep(c).
func setAll(cs []*cuttable, keep func(c *cuttable) int) {
	for _, c := range cs {
		c.set(keep(c))
	}
}

func whole(c *cuttable) int   { return c.n }
func oneElem(c *cuttable) int { return min(1, c.n) }
func empty(*cuttable) int     { return 0 }

// listsAlone is step 1 of fit: when one element of each list is enough, the
// lists are cut (cutLists) with every string whole.
func (r *reducer) listsAlone() ([]byte, bool, error) {
	setAll(r.lists, oneElem)
	if _, ok, err := r.fits(); !ok || err != nil {
		setAll(r.lists, whole)
		return nil, false, err
	}
	setAll(r.lists, whole)
	return r.cutLists()
}

// stringsAlone is step 2 of fit: the lists whole, the long strings capped.
func (r *reducer) stringsAlone() ([]byte, bool, error) {
	return r.capStrings(0)
}

// both is step 3 of fit: the lists cut with the long strings emptied, then the
// strings capped at the length the room left allows.
func (r *reducer) both() ([]byte, bool, error) {
	setAll(r.strs, empty)
	if _, ok, err := r.cutLists(); !ok || err != nil {
		return nil, false, err
	}
	return r.capStrings(0)
}

// cutLists cuts each list, largest first, to the longest prefix (of at least one
// element) with which the body fits, and stops at the first that makes it fit.
func (r *reducer) cutLists() ([]byte, bool, error) {
	for _, c := range r.lists {
		if b, ok, err := r.longest(min(1, c.kept), c.kept, c.set); ok || err != nil {
			return b, ok, err
		}
	}
	return nil, false, nil
}

// capStrings cuts every long string to one common length, the largest (of at
// least lo bytes) with which the body fits; when none fits it leaves them at lo.
func (r *reducer) capStrings(lo int) ([]byte, bool, error) {
	hi := 0
	for _, c := range r.strs {
		hi = max(hi, c.n)
	}
	return r.longest(lo, hi, func(n int) { setAll(r.strs, func(c *cuttable) int { return min(n, c.n) }) })
}

// longest finds by bisection the largest n in [lo, hi] for which the body fits
// after set(n), on the premise that a larger n makes a larger body; when none
// fits it leaves set(lo) and returns false.
func (r *reducer) longest(lo, hi int, set func(n int)) ([]byte, bool, error) {
	for lo < hi {
		mid := (lo + hi + 1) / 2
		set(mid)
		_, ok, err := r.fits()
		switch {
		case err != nil:
			return nil, false, err
		case ok:
			lo = mid
		default:
			hi = mid - 1
		}
	}
	set(lo)
	return r.fits()
}

// lastResort is step 4 of fit: data emptied, the marker "=<bytes of data>".
func (r *reducer) lastResort(body []byte) ([]byte, event.Truncation, error) {
	setAll(r.cuts, whole)
	data, err := json.Marshal(r.env["data"])
	if err != nil {
		return nil, *r.mark, err
	}
	r.env["data"] = map[string]any{}
	r.mark.Truncated = "=" + strconv.Itoa(len(data))
	r.env[event.AttrTruncated] = r.mark.Truncated
	r.env[event.AttrOriginalSize] = r.mark.OriginalSize
	b, err := json.Marshal(r.env)
	if err == nil && len(b) > r.limit {
		err = fmt.Errorf("%w: %d bytes over a limit of %d, from %d", errCannotFit, len(b), r.limit, len(body))
	}
	return b, *r.mark, err
}

// marker is the value of callbustruncated: each value cut that the body still
// holds (not one inside an element cut off its list), in pointer order.
func marker(cuts []*cuttable) string {
	var parts []string
	for _, c := range cuts {
		if c.kept < c.n && c.present() {
			parts = append(parts, c.ptr+"="+strconv.Itoa(c.n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
