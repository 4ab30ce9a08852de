package setup

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/callbus/callbus/config"
)

const goodKey = "sk_test_Zq81PLxR"

// fakeAPI answers GET /api/v1/user-statuses like the call-center API: 401 unless
// X-Api-Auth is goodKey. It counts the requests.
func fakeAPI(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/api/v1/user-statuses" || r.URL.Query().Get("per_page") != "1" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Header.Get("X-Api-Auth") != goodKey || r.Header.Get("Accept") != "application/json" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error_type": "unauthenticated", "message": "Unauthenticated Request", "errors": []}`))
			return
		}
		_, _ = w.Write([]byte(`[{"id": 1, "name": "Available"}]`))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func newHandler(t *testing.T) (*Handler, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "callbus.json")
	h, err := New(Options{ValuesFile: file})
	if err != nil {
		t.Fatal(err)
	}
	return h, file
}

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// install posts values to INSTALL as setup.js does and decodes the answer.
func install(t *testing.T, h http.Handler, values map[string]any) (int, installResponse, string) {
	t.Helper()
	return post(t, h, "/install", values)
}

func TestPageHasAFieldPerParameter(t *testing.T) {
	h, _ := newHandler(t)
	rec := get(t, h, Path)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s", Path, rec.Code, rec.Header().Get("Content-Type"))
	}
	page := rec.Body.String()
	d, _ := config.Declarations()
	for _, p := range d.Params() {
		box := regexp.MustCompile(`(?s)<div class="field" data-key="` + p.Key + `" data-type="` + string(p.Type) + `"(?: hidden)?>(.*?)</div>\s*(?:<div class="field"|</div>\s*</details>)`).FindStringSubmatch(page)
		if box == nil {
			t.Errorf("%s: no field box", p.Key)
			continue
		}
		if !strings.Contains(box[1], `id="f-`+p.Key+`"`) {
			t.Errorf("%s: no input with id f-%s", p.Key, p.Key)
		}
		if strings.Contains(box[0], `data-type="`+string(p.Type)+`" hidden>`) == p.Visible {
			t.Errorf("%s: hidden does not match visible=%v", p.Key, p.Visible)
		}
		if star := strings.Contains(box[1], `<span class="req" title="required"> *</span>`); star != p.Required {
			t.Errorf("%s: asterisk shown %v, required %v", p.Key, star, p.Required)
		}
	}
	for _, want := range []string{
		`<input type="url" id="f-api_url"`,
		`<span class="fixed">https://</span><input type="text" id="f-api_domain"`,
		`<span class="fixed">.mycallcenter.com</span>`,
		`<input type="password" id="f-api_key" name="api_key" value="" autocomplete="new-password">`,
		`<input type="text" id="f-stream_replicas" name="stream_replicas" value="1" inputmode="numeric" autocomplete="off" min="1" max="5">`,
		`<div class="checks" role="group" aria-labelledby="l-resources" id="f-resources"><label title="calls"><input type="checkbox" name="resources" value="calls" checked> Calls</label><label title="call_metrics"><input type="checkbox" name="resources" value="call_metrics" checked> Call metrics</label>`,
		`<select id="f-log_level" name="log_level"><option value="">(none)</option><option value="debug">debug</option><option value="info" selected>info</option>`,
		`<script src="/custom_configs/iparams.js"></script>`,
		`"change":"rateLimitShareChange"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "http://") && regexp.MustCompile(`(src|href)="https?://`).MatchString(page) {
		t.Error("the page loads something from the network")
	}
}

func TestAssets(t *testing.T) {
	h, _ := newHandler(t)
	for path, want := range map[string]string{
		Path + "/iparams.js": "function rateLimitShareChange",
		Path + "/fields.js":  "window.utils",
		Path + "/setup.js":   "window.callbusSetup",
		Path + "/setup.css":  ".field",
	} {
		rec := get(t, h, path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d, body lacks %q", path, rec.Code, want)
		}
	}
	if rec := get(t, h, "/"); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path {
		t.Errorf("GET /: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestInstallInvalidValues(t *testing.T) {
	h, file := newHandler(t)
	api, calls := fakeAPI(t)
	code, resp, _ := install(t, h, map[string]any{
		"api_url": "not a url", "account": "acme.eu", "stream_replicas": "9", "log_level": "trace",
		"resources": []string{"calls", "recordings"}, "http_addr": "8081", "zzz": "1", "rate_limit_share": "0",
	})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", code)
	}
	for key, want := range map[string]string{
		"api_url":          "absolute URL",
		"api_key":          "required",
		"account":          "NATS subject",
		"stream_replicas":  "at most 5",
		"log_level":        `"trace" is not one of`,
		"resources":        `"recordings" is not one of`,
		"http_addr":        "host:port",
		"zzz":              "no installation parameter matches the key",
		"rate_limit_share": "at least 1",
	} {
		if msgs := resp.Errors[key]; len(msgs) == 0 || !strings.Contains(strings.Join(msgs, " "), want) {
			t.Errorf("errors[%s] = %q, want one containing %q", key, msgs, want)
		}
	}
	_ = api
	if calls.Load() != 0 {
		t.Error("the API was called with invalid values")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a file was saved: %v", err)
	}
}

func TestInstallSavesValidValues(t *testing.T) {
	h, file := newHandler(t)
	api, calls := fakeAPI(t)
	code, resp, body := install(t, h, map[string]any{
		"api_url": api.URL, "api_key": goodKey, "account": "acme", "resources": []string{"calls", "users"},
		"stream_replicas": "3", "log_level": "info", "nats_user": "", "api_domain": "",
	})
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if resp.Saved != file || calls.Load() != 1 {
		t.Errorf("saved %q, API calls %d", resp.Saved, calls.Load())
	}
	if strings.Contains(body, goodKey) {
		t.Error("the answer echoes the API key")
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", info.Mode().Perm())
	}
	s, err := config.Load(func(string) string { return "" }, file)
	if err != nil {
		t.Fatalf("config.Load of the saved file: %v", err)
	}
	if s.APIURL != api.URL || s.APIKey.Reveal() != goodKey || s.StreamReplicas != 3 || s.Account != "acme" ||
		len(s.Resources) != 2 || s.LogLevel != "info" {
		t.Errorf("loaded %+v", s)
	}
	saved, _ := os.ReadFile(file)
	if strings.Contains(string(saved), "log_level") {
		t.Errorf("a value equal to its default was saved: %s", saved)
	}

	// The page shows the saved values, but never the key: only that it is set.
	page := get(t, h, Path).Body.String()
	if strings.Contains(page, goodKey) {
		t.Error("the page shows the saved API key")
	}
	for _, want := range []string{`<span class="set" id="s-api_key">set</span>`, `value="` + api.URL + `"`,
		`"key":"api_key","type":"api_key","required":true,"secure":true,"secureSet":true`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}

	// INSTALL again without the key keeps the saved one.
	code, _, body = install(t, h, map[string]any{"api_url": api.URL, "account": "acme2"})
	if code != http.StatusOK {
		t.Fatalf("second install: %d %s", code, body)
	}
	s, err = config.Load(func(string) string { return "" }, file)
	if err != nil || s.APIKey.Reveal() != goodKey || s.Account != "acme2" {
		t.Errorf("after a second install without the key: %v, account %q", err, s.Account)
	}
}

func TestInstallAPIChecks(t *testing.T) {
	api, _ := fakeAPI(t)
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>welcome</html>"))
	}))
	t.Cleanup(html.Close)
	redirect := httptest.NewServer(http.RedirectHandler("https://elsewhere.example/", http.StatusFound))
	t.Cleanup(redirect.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name, url, key string
		errKey, want   string
	}{
		{"wrong key", api.URL, "sk_wrong", "api_key", "401"},
		{"wrong path", api.URL + "/v2", goodKey, "api_url", "404"},
		{"not the API", html.URL, goodKey, "api_url", "not with the API's JSON"},
		{"redirect", redirect.URL, goodKey, "api_url", "redirects"},
		{"nothing listening", closed.URL, goodKey, "api_url", "could not reach " + strings.TrimPrefix(closed.URL, "http://") + ": connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, file := newHandler(t)
			code, resp, body := install(t, h, map[string]any{"api_url": tt.url, "api_key": tt.key, "account": "acme"})
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", code, body)
			}
			if msgs := strings.Join(resp.Errors[tt.errKey], " "); !strings.Contains(msgs, tt.want) {
				t.Errorf("errors %v, want on %s containing %q", resp.Errors, tt.errKey, tt.want)
			}
			if strings.Contains(body, tt.key) {
				t.Error("the answer echoes the key")
			}
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Error("a file was saved")
			}
		})
	}
}

func TestInstallRefusesOtherRequests(t *testing.T) {
	h, _ := newHandler(t)
	tests := []struct {
		name, contentType, origin, body string
		want                            int
	}{
		{"form post", "application/x-www-form-urlencoded", "", "api_key=x", http.StatusUnsupportedMediaType},
		{"cross origin", "application/json", "https://evil.example", `{"values": {}}`, http.StatusForbidden},
		{"not JSON", "application/json", "", `{"values":`, http.StatusBadRequest},
		{"values not an object", "application/json", "", `{"values": [1]}`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, Path+"/install", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.contentType)
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.want, rec.Body.String())
			}
		})
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New without a values file succeeded")
	}
}

func TestPageNotice(t *testing.T) {
	h, file := newHandler(t)
	if page := get(t, h, Path).Body.String(); strings.Contains(page, `id="notice"`) {
		t.Error("a notice without a saved file")
	}
	if err := os.WriteFile(file, []byte(`{"account": "a.b", "api_key": "`+goodKey+`", "log_level": "debug"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	page := get(t, h, Path).Body.String()
	if !strings.Contains(page, `id="notice"`) || !strings.Contains(page, "account: Use letters") {
		t.Error("no notice of the saved file's problem")
	}
	if strings.Contains(page, goodKey) || !strings.Contains(page, `<option value="debug" selected>`) {
		t.Error("the saved values are not shown as they should be")
	}
	if err := os.WriteFile(file, []byte(`{"account": `), 0o600); err != nil {
		t.Fatal(err)
	}
	if page := get(t, h, Path).Body.String(); !strings.Contains(page, "could not be read") {
		t.Error("no notice of an unreadable file")
	}
}

// roundTrip sends every request to target, recording the URL it was meant for.
type roundTrip struct {
	target string // host:port
	asked  []string
}

func (rt *roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.asked = append(rt.asked, r.URL.String())
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = "http", rt.target
	return http.DefaultTransport.RoundTrip(r)
}

// With api_domain instead of api_url, the check goes to https://<account>.<domain>
// and a refused key is reported on api_key, an unknown address on api_domain.
func TestInstallWithDomain(t *testing.T) {
	api, _ := fakeAPI(t)
	rt := &roundTrip{target: strings.TrimPrefix(api.URL, "http://")}
	file := filepath.Join(t.TempDir(), "callbus.json")
	h, err := New(Options{ValuesFile: file, Client: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	code, resp, _ := install(t, h, map[string]any{"api_domain": "Acme", "api_key": "sk_wrong", "account": "acme"})
	if code != http.StatusUnprocessableEntity || len(resp.Errors["api_key"]) == 0 {
		t.Errorf("wrong key: %d %v", code, resp.Errors)
	}
	if want := "https://acme.mycallcenter.com/api/v1/user-statuses?per_page=1"; len(rt.asked) != 1 || rt.asked[0] != want {
		t.Errorf("asked %v, want %s", rt.asked, want)
	}
	code, resp, body := install(t, h, map[string]any{"api_domain": "acme", "api_key": goodKey, "account": "acme"})
	if code != http.StatusOK {
		t.Fatalf("good key: %d %s", code, body)
	}
	s, err := config.Load(func(string) string { return "" }, file)
	if err != nil || s.APIURL != "https://acme.mycallcenter.com" {
		t.Errorf("loaded %q, %v", s.APIURL, err)
	}
	// Both given: the rule between them, before any request.
	rt.asked = nil
	code, resp, _ = install(t, h, map[string]any{"api_domain": "acme", "api_url": api.URL, "api_key": goodKey, "account": "acme"})
	if code != http.StatusUnprocessableEntity || !strings.Contains(strings.Join(resp.Errors["api_domain"], ""), "not both") || len(rt.asked) != 0 {
		t.Errorf("both: %d %v, requests %v", code, resp.Errors, rt.asked)
	}
}
