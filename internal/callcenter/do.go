package callcenter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// maxBody bounds a response body (a page of 1000 calls is a few MB).
const maxBody = 64 << 20

// ErrBodyTooLarge is wrapped by the error of a response whose body exceeds the
// client's bound (64 MiB). It is not retried as is; the by_time list readers
// (CallsSince, CallMetricsSince) read the window in smaller pieces instead.
var ErrBodyTooLarge = errors.New("response body too large")

// request is one operation to perform.
type request struct {
	op     string // names the operation in errors and logs: "list calls page 3"
	method string
	path   string // below /api/v1
	query  url.Values
	body   []byte // JSON; nil: no body
	// ok reports a success status (nil: any 2xx).
	ok func(status int) bool
	// decode reads a success response (nil: the body is ignored). An error is a
	// malformed response. It must not keep body, nor any slice of it: the
	// buffer is reused for the next response (see readBody).
	decode func(status int, h http.Header, body []byte) error
}

// response is the outcome of a successful request.
type response struct {
	status int
	rate   RateState
}

// do performs r with retries (see RetryPolicy) and returns the final response or
// an error naming r.op.
func (c *Client) do(ctx context.Context, r request) (response, error) {
	var (
		res       response
		attempt   int
		decodeBad int
		lastErr   error
		permanent bool
	)
	idem := idempotent(r.method)
	bo := newRetryBackOff(c.retry, c.clock)
	op := func() error {
		attempt++
		out, err := c.attempt(ctx, r, attempt, idem)
		lastErr = err
		switch {
		case err == nil:
			res = out.response
			return nil
		case out.retryAfter > 0:
			bo.floor = out.retryAfter
		}
		retry := out.retry
		if errors.Is(err, ErrMalformedResponse) {
			decodeBad++
			retry = idem && decodeBad <= c.retry.MaxDecodeRetries
		}
		if !retry {
			permanent = true
			return backoff.Permanent(err)
		}
		bo.now = attempt == 1 && out.retryAfter == 0 && retryAtOnce(out.status, idem, err)
		return err
	}
	notify := func(err error, next time.Duration) {
		if IsRateLimited(err) {
			c.lim.Pause(next)
		}
	}
	err := backoff.RetryNotifyWithTimer(op, backoff.WithContext(bo, ctx), notify, &backoffTimer{c: c.clock})
	switch {
	case err == nil:
		return res, nil
	case permanent:
		return res, fmt.Errorf("%s: %w", r.op, err)
	case ctx.Err() != nil && lastErr != nil && !errors.Is(lastErr, ctx.Err()):
		return res, fmt.Errorf("%s: %w (after %d attempts, last: %w)", r.op, context.Cause(ctx), attempt, lastErr)
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s: %w", r.op, context.Cause(ctx))
	}
	return res, fmt.Errorf("%s: giving up after %d attempts: %w", r.op, attempt, err)
}

// attemptResult carries one attempt's outcome.
type attemptResult struct {
	response
	retry      bool // the error may be retried (see RetryPolicy)
	retryAfter time.Duration
}

// attempt sends r once, after waiting for the rate budget.
func (c *Client) attempt(ctx context.Context, r request, attempt int, idem bool) (attemptResult, error) {
	var out attemptResult
	ticket, err := c.lim.Acquire(ctx)
	if err != nil {
		return out, err
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	// wrote tells whether the server may have seen the request (see RetryPolicy).
	var wrote atomic.Bool
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
	})
	req, err := http.NewRequestWithContext(tctx, r.method, c.url(r.path, r.query), body)
	if err != nil {
		ticket.Cancel()
		return out, fmt.Errorf("build request: %w", err)
	}
	c.setHeaders(req.Header, r.body != nil)

	start := c.clock.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		ticket.Done(noRate())
		err = fmt.Errorf("send: %w", err)
		out.retry = ctx.Err() == nil && (idem || !wrote.Load())
		c.observe(r, attempt, 0, start, noRate(), err)
		return out, err
	}
	b, readErr := readBody(resp.Body, resp.ContentLength, c.maxBody+1)
	defer b.release() // result's decoders copy what they keep
	data := b.data
	_ = resp.Body.Close()
	now := c.clock.Now()
	out.status = resp.StatusCode
	out.rate = parseRate(resp.Header, now)
	c.setRate(out.rate)
	c.sawDate(resp.Header)
	if resp.StatusCode == http.StatusTooManyRequests {
		out.retryAfter = retryAfter(resp.Header, now)
		ticket.Throttled(out.rate, out.retryAfter)
	} else {
		ticket.Done(out.rate)
		if retryableStatus(resp.StatusCode, idem) {
			out.retryAfter = retryAfter(resp.Header, now)
		}
	}

	err = c.result(r, resp, data, readErr, &out)
	c.observe(r, attempt, resp.StatusCode, start, out.rate, err)
	return out, err
}

// result turns a response into nil or the attempt's error, setting out.retry.
func (c *Client) result(r request, resp *http.Response, data []byte, readErr error, out *attemptResult) error {
	status := resp.StatusCode
	ok := r.ok
	if ok == nil {
		ok = func(s int) bool { return s >= 200 && s < 300 }
	}
	idem := idempotent(r.method)
	switch {
	case readErr != nil:
		out.retry = idem
		return fmt.Errorf("read response: %w", readErr)
	case int64(len(data)) > c.maxBody:
		return fmt.Errorf("read response: %w: over %d bytes", ErrBodyTooLarge, c.maxBody)
	case !ok(status):
		ae := newAPIError(status, data, c.scrub.Replace)
		ae.Operation, ae.Method, ae.Path = r.op, r.method, resp.Request.URL.Path
		ae.RetryAfter, ae.Rate = out.retryAfter, out.rate
		if status >= 300 && status < 400 {
			ae.Message = "unexpected redirect"
		}
		out.retry = retryableStatus(status, idem)
		return ae
	case r.decode != nil:
		if err := r.decode(status, resp.Header, data); err != nil {
			return fmt.Errorf("%w: HTTP %d: %w", ErrMalformedResponse, status, err)
		}
	}
	return nil
}

// setHeaders puts the API's request headers on h.
func (c *Client) setHeaders(h http.Header, hasBody bool) {
	c.key.SetHeader(h, "X-Api-Auth")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", c.userAgent)
	if hasBody {
		h.Set("Content-Type", "application/json")
	}
}

// observe logs one attempt and reports it to the response hook.
func (c *Client) observe(r request, attempt, status int, start time.Time, rate RateState, err error) {
	d := c.clock.Now().Sub(start)
	path := c.base.Path + r.path
	// Every line about a request carries its operation, status, duration and the
	// rate limit left; failed attempts (retried or not) at warn level.
	e := c.log.Debug()
	if err != nil {
		e = c.log.Warn()
	}
	if e.Enabled() {
		msg := "callcenter request"
		if err != nil && status == 0 && !errors.Is(err, context.Canceled) { // no HTTP answer: say where, what to check
			msg = "api: no answer from the call-center API at " + c.base.Redacted() +
				": check api_url or api_domain (CALLBUS_API_URL, CALLBUS_API_DOMAIN) and that the API is reachable from here; retrying"
		}
		e.Str("op", r.op).Str("method", r.method).Str("path", path).
			Int("status", status).Dur("duration_ms", d).Int("rate_remaining", rate.Remaining).
			Int("attempt", attempt).Err(err).Msg(msg)
	}
	if c.onResp != nil {
		c.onResp(ResponseInfo{Operation: r.op, Name: opName(r.op), Method: r.method, Path: path,
			Status: status, Attempt: attempt, Duration: d, Rate: rate, Err: err})
	}
}

// opName drops the numbers (ids, page numbers) and the word "page" from an
// operation's description: "list calls page 3" → "list calls".
func opName(op string) string {
	var keep []string
	for _, w := range strings.Fields(op) {
		if w == "page" || strings.Trim(w, "0123456789") == "" {
			continue
		}
		keep = append(keep, w)
	}
	return strings.Join(keep, " ")
}
