package callcenter

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/callbus/callbus/internal/secret"
)

// Client calls the call-center API of one account. It is safe for concurrent use.
// Every operation takes ctx first, returns an error naming the operation, and waits
// for the account's rate budget (the Limiter) before each attempt.
type Client struct {
	base      *url.URL // scheme://host[/prefix]/api/v1, no trailing slash
	key       secret.Value
	scrub     *strings.Replacer
	hc        *http.Client
	userAgent string
	log       zerolog.Logger
	lim       *Limiter
	retry     RetryPolicy
	onResp    func(ResponseInfo)
	onReject  func(Rejection)
	maxBody   int64 // bound of a response body (see ErrBodyTooLarge)
	noRaw     bool  // lists leave the records' Raw nil (WithoutRaw)
	redactor  Redactor
	clock     clock

	mu   sync.Mutex
	rate RateState
	// byTimeIgnoredUntil: /calls was seen ignoring by_time; CallsSince reads
	// without the filter until then.
	byTimeIgnoredUntil time.Time
	// date is the latest Date header seen (servertime.go).
	date time.Time

	// The pieces the last reads of the /calls and /call_metrics windows took
	// (window.go).
	callPieces, metricPieces pieceMemory
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client. The Client uses a shallow copy whose
// CheckRedirect never follows redirects (DownloadRecording needs the 302 itself).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithLogger sets the logger; every request is logged at debug level (operation,
// method, path, status, duration, remaining budget, attempt). Default: no logging.
func WithLogger(l zerolog.Logger) Option { return func(c *Client) { c.log = l } }

// WithLimiter sets the account's shared Limiter. Without it the Client gets a
// Limiter of its own with Share 1, which is right only if it is the account's sole
// client.
func WithLimiter(l *Limiter) Option { return func(c *Client) { c.lim = l } }

// WithVersion sets the version in the User-Agent (default "dev").
func WithVersion(v string) Option {
	return func(c *Client) { c.userAgent = userAgent(v) }
}

// WithRetryPolicy sets the retry policy (see RetryPolicy for defaults).
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithResponseHook sets a function called after every attempt (for metrics). It
// must be fast and safe for concurrent use.
func WithResponseHook(f func(ResponseInfo)) Option { return func(c *Client) { c.onResp = f } }

// WithoutRaw makes the records of lists (ListCalls, CallsSince, ListUsers …)
// come without their Raw JSON, for a caller that never reads it: each record
// would otherwise hold a copy of its bytes (a page of 1,000 calls: about 1.5 MB
// more, live until the page is handled). Records read one by one keep it.
func WithoutRaw() Option { return func(c *Client) { c.noRaw = true } }

// Redactor applies an account's data policy to a record just decoded
// (*policy.Policy is one): it changes the record in place, before any other
// part of callbus sees it. Redact must be safe for concurrent use.
type Redactor interface{ Redact(record any) }

// WithRedactor makes every record the Client returns (list pages, single
// reads, DecodeRecord) pass through r first: the personal values r removes are
// never handed to a caller. Records of types r does not know pass unchanged.
func WithRedactor(r Redactor) Option { return func(c *Client) { c.redactor = r } }

// redact applies the Redactor, if any, to v (a pointer to a record).
func (c *Client) redact(v any) {
	if c.redactor != nil {
		c.redactor.Redact(v)
	}
}

// withMaxBody sets the bound of a response body (tests).
func withMaxBody(n int64) Option { return func(c *Client) { c.maxBody = n } }

// withClock sets the time source (tests).
func withClock(k clock) Option { return func(c *Client) { c.clock = k } }

// ResponseInfo describes one attempt of an operation.
type ResponseInfo struct {
	// Operation describes the request ("list calls page 3", "get call 812");
	// Name is the operation without ids and page numbers ("list calls", "get
	// call"), a bounded set fit for metric labels.
	Operation, Name, Method, Path string
	// Status is 0 when no response arrived (Err says why).
	Status   int
	Attempt  int
	Duration time.Duration
	Rate     RateState
	Err      error
}

func userAgent(version string) string {
	if version == "" {
		version = "dev"
	}
	return "callbus/" + version + " (+https://github.com/callbus/callbus)"
}

// New returns a Client for the API at baseURL ("http://127.0.0.1:8080", with or
// without a trailing slash or "/api/v1") authenticated by key. It fails on a base
// URL that is not absolute http(s) or carries a query, and on an empty key.
func New(baseURL string, key secret.Value, opts ...Option) (*Client, error) {
	base, err := parseBase(baseURL)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	if key.IsZero() {
		return nil, errors.New("new client: api key is empty")
	}
	c := &Client{
		base:      base,
		key:       key,
		userAgent: userAgent(""),
		log:       zerolog.Nop(),
		clock:     wallClock{},
		rate:      noRate(),
		maxBody:   maxBody,
	}
	// The replacer removes echoes of the key from server text kept in errors.
	c.scrub = strings.NewReplacer(key.Reveal(), secret.Redacted)
	for _, o := range opts {
		o(c)
	}
	c.retry = c.retry.withDefaults()
	if c.hc == nil {
		c.hc = defaultHTTPClient()
	} else {
		hc := *c.hc
		c.hc = &hc
	}
	c.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.lim == nil {
		c.lim, _ = NewLimiter(LimiterConfig{Share: 1})
		c.lim.clock = c.clock
	}
	return c, nil
}

// defaultHTTPClient bounds every phase of a request. Its transport is the one
// every Client made without WithHTTPClient shares: clients of many accounts of
// one API host reuse each other's idle connections instead of each holding a
// pool (and two goroutines per connection) of its own.
func defaultHTTPClient() *http.Client {
	return &http.Client{Transport: defaultTransport(), Timeout: 2 * time.Minute}
}

// defaultTransport is made once, on first use.
var defaultTransport = sync.OnceValue(func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ResponseHeaderTimeout = 60 * time.Second
	t.MaxIdleConnsPerHost = 8
	return t
})

// parseBase normalises the base URL to end in /api/v1.
func parseBase(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("base url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base url %q: want an absolute http or https URL", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base url %q: must not have a query or fragment", u.Redacted())
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(p, apiPrefix) {
		p += apiPrefix
	}
	u.Path, u.RawPath = p, ""
	return u, nil
}

// apiPrefix starts every path of the API.
const apiPrefix = "/api/v1"

// BaseURL returns the normalised base URL, ending in /api/v1.
func (c *Client) BaseURL() string { return c.base.String() }

// Limiter returns the Limiter the client waits on.
func (c *Client) Limiter() *Limiter { return c.lim }

// RateLimit returns what the latest response carrying X-RateLimit-* headers said
// (Known is false before any).
func (c *Client) RateLimit() RateState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate
}

func (c *Client) setRate(r RateState) {
	if !r.Known() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !r.Observed.Before(c.rate.Observed) {
		c.rate = r
	}
}

// url builds the URL of path (below /api/v1) with query q.
func (c *Client) url(path string, q url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = q.Encode()
	return u.String()
}
