package callcenter

import (
	"fmt"

	"github.com/callbus/callbus/internal/apijson"
)

func init() {
	apijson.Register((*Meta).decode)
}

// Paging limits of the API.
const (
	// MaxPerPage is the largest per_page the API accepts; iterators use it by
	// default because a page costs one request of the rate budget whatever its size.
	MaxPerPage = 1000
	// DefaultPerPage is the server's page size when per_page is not sent.
	DefaultPerPage = 10
)

// Meta is the paging information of a list response. It can be absent (field note
// 7), in which case Page.Meta is nil.
type Meta struct {
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
	// Current is the page returned.
	Current int `json:"current"`
}

// UnmarshalJSON decodes paging meta tolerantly.
func (m *Meta) UnmarshalJSON(data []byte) error { return apijson.Decode(data, m.decode) }

// decode reads a Meta in one pass; registered with apijson, so lists and
// records holding it read it the same way.
func (m *Meta) decode(d *apijson.Decoder) error {
	*m = Meta{}
	return d.Object("meta",
		apijson.Key("total_count", apijson.Int(&m.TotalCount)),
		apijson.Key("total_pages", apijson.Int(&m.TotalPages)),
		apijson.Key("current", apijson.Int(&m.Current)),
	)
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T
	// Meta is nil when the response has none (bare-array lists always).
	Meta *Meta
	// Number is the page requested (1-based) and PerPage the page size requested
	// (0: the server's default, DefaultPerPage).
	Number, PerPage int
	// Rate is what the response's X-RateLimit-* headers said.
	Rate RateState
	// Rejections are the records of the page left out of Items (see
	// Rejection), in page order; the page held len(Items)+len(Rejections)
	// records. A rejected record is still listed: a reader deciding what the
	// list no longer holds counts its ID (or, without one, cannot tell).
	Rejections []Rejection

	// fingerprint identifies the body, to notice a server that ignores page.
	fingerprint uint64
}

// IsLast reports whether no page follows this one: it is empty, it reaches
// Meta.TotalPages, or (without usable meta) it holds fewer records than PerPage.
// Rejected records count: a page is as full as the server made it.
func (p Page[T]) IsLast() bool {
	if p.served() == 0 {
		return true
	}
	if p.Meta != nil && p.Meta.TotalPages > 0 {
		return p.Number >= p.Meta.TotalPages
	}
	per := p.PerPage
	if per == 0 {
		per = DefaultPerPage
	}
	return p.served() < per
}

// served is how many records the server sent in the page.
func (p Page[T]) served() int { return len(p.Items) + len(p.Rejections) }

// listEnvelope is a list response: a bare array, or an object holding the items
// under a key and optionally meta.
type listEnvelope[T any] struct {
	items    []T
	meta     *Meta
	rejected []Rejection
}

// decodeList decodes body as a bare array of T or as {<key>: [T], meta}, in one
// pass. Either shape is accepted for every list, since drift moves between them;
// an object without the key, or a key that holds no array, is an error rather than
// an empty page, and so is a body that is not JSON. An item that fails to decode
// or breaks a sanity rule (see insane) is left out and reported in rejected, never
// failing the page.
func decodeList[T any](body []byte, listKey string) (listEnvelope[T], error) {
	return decodeListRaw[T](body, listKey, true)
}

// decodeListRaw is decodeList; keepRaw false leaves the records' Raw nil (see
// WithoutRaw).
func decodeListRaw[T any](body []byte, listKey string, keepRaw bool) (listEnvelope[T], error) {
	return decodeListBy[T](body, listKey, !keepRaw, false)
}

// decodeListBy is decodeListRaw; general reads the body on apijson's general
// path alone (tests compare its fast path with it).
func decodeListBy[T any](body []byte, listKey string, noRaw, general bool) (listEnvelope[T], error) {
	var env listEnvelope[T]
	read := func(d *apijson.Decoder) error {
		env = listEnvelope[T]{} // a second pass (apijson's fast path gave up) starts over
		if d.Peek() == '[' {
			if err := readItems(d, listKey, &env); err != nil {
				return fmt.Errorf("decode %s: %w", listKey, err)
			}
			return nil
		}
		found := false
		err := d.Object(listKey+" list",
			apijson.Key(listKey, func(d *apijson.Decoder) error { found = true; return readItems(d, listKey, &env) }),
			apijson.Key("meta", apijson.Ptr(&env.meta)),
		)
		if err == nil && !found {
			err = fmt.Errorf("decode %s list: no %q array in the response", listKey, listKey)
		}
		return err
	}
	var err error
	switch {
	case general:
		err = apijson.DecodeGeneral(body, read)
	case noRaw:
		err = apijson.DecodeWithoutRaw(body, read)
	default:
		err = apijson.Decode(body, read)
	}
	return env, err
}

// readItems reads the array of a list's items into env, each on its own (see
// decodeItem). Null is an empty list.
func readItems[T any](d *apijson.Decoder, listKey string, env *listEnvelope[T]) error {
	env.items, env.rejected = nil, nil // a key given twice: the last wins
	if k := d.Peek(); k == 0 || k == 'n' {
		return d.Skip()
	}
	items, done := getScratch[T]()
	err := d.Array(func() error {
		items = append(items, *new(T))
		if rej := decodeItem(d, listKey, &items[len(items)-1]); rej != nil {
			items = items[:len(items)-1]
			env.rejected = append(env.rejected, *rej)
		}
		return nil
	})
	env.items = done(items)
	return err
}
