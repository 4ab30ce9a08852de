package callcenter

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/callbus/callbus/internal/apijson"
)

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
func (m *Meta) UnmarshalJSON(data []byte) error {
	*m = Meta{}
	return apijson.Object("meta", data,
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

	// fingerprint identifies the body, to notice a server that ignores page.
	fingerprint uint64
}

// IsLast reports whether no page follows this one: it is empty, it reaches
// Meta.TotalPages, or (without usable meta) it holds fewer items than PerPage.
func (p Page[T]) IsLast() bool {
	if len(p.Items) == 0 {
		return true
	}
	if p.Meta != nil && p.Meta.TotalPages > 0 {
		return p.Number >= p.Meta.TotalPages
	}
	per := p.PerPage
	if per == 0 {
		per = DefaultPerPage
	}
	return len(p.Items) < per
}

// listEnvelope is a list response: a bare array, or an object holding the items
// under a key and optionally meta.
type listEnvelope[T any] struct {
	items []T
	meta  *Meta
}

// decodeList decodes body as a bare array of T or as {<key>: [T], meta}. Either
// shape is accepted for every list, since drift moves between them; an object
// without the key is an error rather than an empty page.
func decodeList[T any](body []byte, listKey string) (listEnvelope[T], error) {
	var env listEnvelope[T]
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &env.items); err != nil {
			return env, fmt.Errorf("decode %s: %w", listKey, apijson.JSONErr(err))
		}
		return env, nil
	}
	found := false
	items := apijson.Slice(&env.items)
	err := apijson.Object(listKey+" list", b,
		apijson.Key(listKey, func(raw json.RawMessage) error { found = true; return items(raw) }),
		apijson.Key("meta", apijson.Ptr(&env.meta)),
	)
	if err == nil && !found {
		err = fmt.Errorf("decode %s list: no %q array in the response", listKey, listKey)
	}
	return env, err
}
