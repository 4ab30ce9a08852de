package setup

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/testkit/testenv"
	"github.com/chromedp/chromedp"
)

// browser drives one tab; every failure ends the test.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// newBrowser starts Debian's chromium (apt-get install chromium) or another
// Chrome; without one the test skips, or fails in CI (testenv.SkipOptional).
func newBrowser(t *testing.T) *browser {
	t.Helper()
	return &browser{t: t, ctx: testenv.Browser(t, "the setup page was not tested in a browser", 1280, 900)}
}

func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval returns the value of a JavaScript expression as a string.
func (b *browser) eval(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("String("+expr+")"))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls until the JavaScript condition holds; then describes what it saw
// on failure.
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		b.t.Fatalf("%s: %s never held (%v); form errors %q; fields %s", what, cond, err,
			b.eval(`document.getElementById("form-errors").textContent`),
			b.eval(`Array.from(document.querySelectorAll(".field.invalid")).map(function (f) { return f.dataset.key + ": " + f.querySelector(".error").textContent; }).join("; ")`))
	}
}

// typeInto replaces a field's text as a person does, then leaves the field, which
// fires its change event.
func (b *browser) typeInto(key, text string) {
	b.t.Helper()
	sel := chromedp.ID("f-" + key)
	b.open(key)
	b.eval(`document.getElementById("f-` + key + `").value = ""`) // the property: chromedp.Clear sets the attribute
	b.do("type into "+key, chromedp.SendKeys(sel, text), chromedp.Blur(sel))
}

// open opens the collapsed section of a field, as a click on its title does.
func (b *browser) open(key string) {
	b.t.Helper()
	b.eval(`document.getElementById("f-` + key + `").closest("details").open = true`)
}

// change sets a field with a JavaScript statement on el and fires change, for the
// controls that keys do not reach simply (multiselect options, clearing).
func (b *browser) change(key, statement string) {
	b.t.Helper()
	b.eval(`(function () { var el = document.getElementById("f-` + key + `"); ` + statement +
		`; el.dispatchEvent(new Event("change", {bubbles: true})); return ""; })()`)
}

// screenshot saves the whole page as CALLBUS_SETUP_SCREENSHOT-<name>.png, and
// what the window shows as ...-<name>-window.png, when that variable names a path
// prefix: to look at the page.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	testenv.Screenshot(b.t, b.ctx, "CALLBUS_SETUP_SCREENSHOT", name)
}

func errorOf(key string) string { return `document.getElementById("e-` + key + `").textContent` }

// checkedIn is the comma-separated values of the checked boxes of a multiselect.
func checkedIn(key string) string {
	return `Array.from(document.querySelectorAll("#f-` + key + ` input:checked")).map(function (b) { return b.value; }).join()`
}

func hidden(key string) string {
	return `document.querySelector('.field[data-key="` + key + `"]').hidden`
}

func TestSetupPageInBrowser(t *testing.T) {
	b := newBrowser(t)
	api, _ := fakeAPI(t)
	h, file := newHandler(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	b.do("open the page", chromedp.Navigate(srv.URL+Path))
	b.waitFor("page ready", `document.documentElement.dataset.ready === "true"`)

	// A callback returning a non-empty string (the conditional form): an error,
	// and the value is cleared. A good value clears the error.
	b.typeInto("rate_limit_share", "98")
	b.waitFor("share above 95 refused", errorOf("rate_limit_share")+`.includes("starve")`)
	if v := b.eval(`document.getElementById("f-rate_limit_share").value`); v != "" {
		t.Errorf("refused share kept its value %q", v)
	}
	b.typeInto("rate_limit_share", "90")
	b.waitFor("share error cleared", errorOf("rate_limit_share")+` === ""`)

	// utils.get and utils.set: a domain hides the URL field and fills the account.
	b.typeInto("api_domain", "Acme")
	b.waitFor("api_url hidden", hidden("api_url"))
	b.waitFor("account filled", `document.getElementById("f-account").value === "acme"`)
	b.change("api_domain", `el.value = ""`)
	b.waitFor("api_url shown again", "!"+hidden("api_url"))

	// utils.set max, then a callback's promise rejecting with a message.
	b.typeInto("stream_max_age_hours", "1")
	b.waitFor("duplicate window capped", `document.getElementById("f-stream_duplicate_window_seconds").max === "3600"`)
	b.typeInto("stream_duplicate_window_seconds", "7200")
	b.waitFor("promise rejection shown", errorOf("stream_duplicate_window_seconds")+`.includes("longer than the retention")`)
	b.typeInto("stream_duplicate_window_seconds", "600")
	b.waitFor("promise resolution clears", errorOf("stream_duplicate_window_seconds")+` === ""`)

	// A multiselect's callback hides the intervals of resources not polled;
	// a credentials file disables the NATS user.
	b.open("resources")
	b.do("uncheck teams", chromedp.Click(chromedp.CSS(`#f-resources input[value="teams"]`)))
	b.waitFor("teams interval hidden", hidden("teams_interval_seconds"))
	b.typeInto("nats_creds", "/etc/callbus/nats.creds")
	b.waitFor("NATS user disabled", `document.getElementById("f-nats_user").disabled`)
	b.change("nats_creds", `el.value = ""`)
	b.waitFor("NATS user enabled", `!document.getElementById("f-nats_user").disabled`)

	// INSTALL with invalid values: the page's checks show an error per field.
	b.change("account", `el.value = ""`)
	b.typeInto("stream_replicas", "9")
	b.typeInto("http_addr", "8081")
	b.typeInto("api_url", api.URL)
	b.typeInto("api_key", "sk_wrong_key")
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("account required", errorOf("account")+` === "required"`)
	b.waitFor("replicas bound", errorOf("stream_replicas")+`.includes("at most 5")`)
	b.waitFor("http_addr regex message", errorOf("http_addr")+`.includes("host:port")`)
	b.screenshot("invalid")

	// Valid on the page, refused by the server: the API rejects the key.
	b.typeInto("account", "acme")
	b.typeInto("stream_replicas", "3")
	b.typeInto("http_addr", ":9090")
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("401 on the key", errorOf("api_key")+`.includes("401")`)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a file was saved with a refused key: %v", err)
	}

	// The right key: saved.
	b.typeInto("api_key", goodKey)
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("saved", `document.getElementById("result").textContent.includes("Saved to")`)
	if v := b.eval(`document.getElementById("f-api_key").value`); v != "" {
		t.Errorf("the key stays in the page after saving: %q", v)
	}

	b.screenshot("saved")

	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	s, err := config.Load(func(string) string { return "" }, file)
	if err != nil {
		t.Fatalf("load the saved file: %v", err)
	}
	want := []string{"calls", "call_metrics", "users", "user_statuses"}
	if s.Account != "acme" || s.APIURL != api.URL || s.APIKey.Reveal() != goodKey || s.StreamReplicas != 3 ||
		s.RateLimitShare != 0.9 || s.StreamMaxAge != time.Hour || s.HTTPAddr != ":9090" ||
		strings.Join(s.Resources, ",") != strings.Join(want, ",") {
		t.Errorf("saved settings %+v", s)
	}
	if s.TeamsInterval != 300*time.Second {
		t.Errorf("hidden teams interval %v, want the default", s.TeamsInterval)
	}
}
