package callcenter

import (
	"context"
	"fmt"
	"hash/maphash"
	"iter"
	"net/http"
	"net/url"
)

// pageSeed seeds the pages' fingerprints. They are compared only within this
// process, so maphash (AES-based, several times faster over a 160 KB page than
// FNV's byte loop, which cost 4% of the poller's CPU in a backlog) will do.
var pageSeed = maphash.MakeSeed()

// fetchPage reads one page of a list.
type fetchPage[T any] func(ctx context.Context, o ListOptions) (Page[T], error)

// pages iterates over the pages of a list from o.Page (default 1) with o.PerPage
// (default MaxPerPage). It ends after the page for which Page.IsLast holds (an
// empty page is not yielded), or after yielding an error: a failed page, or a page
// identical to the one before (a server ignoring the page parameter would
// otherwise loop forever). List order is undocumented (field note 2): records
// created or changed while paging may be missed or repeated.
func pages[T any](ctx context.Context, o ListOptions, fetch fetchPage[T]) iter.Seq2[Page[T], error] {
	return func(yield func(Page[T], error) bool) {
		o.Page = o.number()
		if o.PerPage == 0 {
			o.PerPage = MaxPerPage
		}
		var prev uint64
		for first := true; ; first = false {
			p, err := fetch(ctx, o)
			if err != nil {
				yield(Page[T]{}, err)
				return
			}
			if p.served() == 0 {
				return
			}
			if !first && p.fingerprint == prev {
				yield(Page[T]{}, errRepeats(o.Page))
				return
			}
			prev = p.fingerprint
			if !yield(p, nil) || p.IsLast() {
				return
			}
			o.Page++
		}
	}
}

// errRepeats is the error of a page n whose body is the page before's: a server
// ignoring the page parameter would otherwise keep a reader going forever.
func errRepeats(n int) error {
	return fmt.Errorf("page %d repeats page %d: the server ignores the page parameter", n, n-1)
}

// items flattens a page iterator into its items; an error is yielded with the zero
// item and ends the iteration.
func items[T any](seq iter.Seq2[Page[T], error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for p, err := range seq {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range p.Items {
				if !yield(it, nil) {
					return
				}
			}
		}
	}
}

// listPage reads one page of the list at path, whose items sit under listKey when
// the response is an object. name names the list in errors ("list calls page 2").
func listPage[T any](ctx context.Context, c *Client, name, path, listKey string, o ListOptions, q url.Values, problems []string) (Page[T], error) {
	op := fmt.Sprintf("list %s page %d", name, o.number())
	if p := append(o.problems(), problems...); len(p) > 0 {
		return Page[T]{}, invalid(op, p)
	}
	for k, v := range o.query() {
		q[k] = v
	}
	var page Page[T]
	res, err := c.do(ctx, request{op: op, method: http.MethodGet, path: path, query: q,
		decode: func(_ int, _ http.Header, body []byte) error {
			env, err := decodeListRaw[T](body, listKey, !c.noRaw)
			page = Page[T]{Items: env.items, Meta: env.meta, Rejections: env.rejected, fingerprint: maphash.Bytes(pageSeed, body)}
			return err
		}})
	if err != nil {
		return Page[T]{}, err
	}
	for i := range page.Items {
		c.redact(&page.Items[i])
	}
	// Reported only now: a failed attempt's page is read again.
	for _, r := range page.Rejections {
		c.reject(op, r)
	}
	page.Number, page.PerPage, page.Rate = o.number(), o.PerPage, res.rate
	return page, nil
}

// reject logs a record left out of a page (at debug level: it is left out again
// on every read until the API serves it correctly; the hook's owner logs it once)
// and reports it to the rejection hook.
func (c *Client) reject(op string, r Rejection) {
	c.log.Debug().Str("op", op).Str("resource", r.Resource).Int64("id", r.ID).Str("field", r.Field).
		Str("reason", r.Reason).Str("detail", r.Detail).Msg("callcenter record rejected; it is read again later")
	if c.onReject != nil {
		c.onReject(r)
	}
}
