package publish

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// minCutString is the shortest string fit cuts: shorter ones are ids, times,
// enum values, whose prefix would not be valid.
const minCutString = 256

// cuttable is one list or long string of an event's data that fit may shorten.
type cuttable struct {
	ptr  string // JSON pointer into data
	list bool
	n    int            // original length: elements, or bytes of a string
	size int            // encoded size, to cut the largest first
	set  func(keep int) // keeps the first keep elements (bytes of a string)
	kept int
	// in and at place the value in the list holding it (in is nil for a value
	// reached through objects only): it is in the body while its element is.
	in *cuttable
	at int
}

// present tells whether c is still in the body: no list holding it was cut
// before its element.
func (c *cuttable) present() bool {
	for p := c; p.in != nil; p = p.in {
		if p.at >= p.in.kept {
			return false
		}
	}
	return true
}

var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

// collect finds the lists and long strings of v, at any depth (inside list
// elements too), with their JSON pointers. v lies in element at of the list in
// (in is nil for a value reached through objects only).
func collect(v any, ptr string, in *cuttable, at int, out *[]*cuttable) {
	if x, ok := v.(map[string]any); ok {
		for k, child := range x {
			visit(child, ptr+"/"+pointerEscape.Replace(k), func(y any) { x[k] = y }, in, at, out)
		}
	}
}

// visit adds v (at ptr, replaced through assign; in element at of the list in)
// to out when it is a list or a long string, and collects what it holds.
func visit(v any, ptr string, assign func(any), in *cuttable, at int, out *[]*cuttable) {
	switch x := v.(type) {
	case map[string]any:
		collect(x, ptr, in, at, out)
	case []any:
		enc, _ := json.Marshal(x) // decoded JSON always encodes
		c := &cuttable{ptr: ptr, list: true, n: len(x), size: len(enc), kept: len(x), in: in, at: at}
		c.set = func(keep int) { assign(x[:keep]); c.kept = keep }
		*out = append(*out, c)
		for i, child := range x {
			visit(child, ptr+"/"+strconv.Itoa(i), func(y any) { x[i] = y }, c, i, out)
		}
	case string:
		if len(x) < minCutString {
			return
		}
		c := &cuttable{ptr: ptr, n: len(x), size: len(x), kept: len(x), in: in, at: at}
		c.set = func(keep int) {
			for keep > 0 && keep < len(x) && !utf8.RuneStart(x[keep]) {
				keep-- // never split a character
			}
			assign(x[:keep])
			c.kept = keep
		}
		*out = append(*out, c)
	}
}
