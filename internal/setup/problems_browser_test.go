package setup

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/chromedp/chromedp"
)

// focusedOnScreen holds when the focused element is in the window, above the bar
// of INSTALL.
const focusedOnScreen = `(function () { var r = document.activeElement.getBoundingClientRect();` +
	` return r.top >= 0 && r.bottom <= document.querySelector(".actions").getBoundingClientRect().top; })()`

// unknownDomainClient answers every host under mycallcenter.com as unknown, as
// DNS does for an account that does not exist, and dials the others.
func unknownDomainClient() *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			if strings.HasSuffix(host, ".mycallcenter.com") {
				return nil, &net.OpError{Op: "dial", Net: network,
					Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
			}
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// The page as a person meets it: sections, real key presses into number fields,
// INSTALL's list of problems by field name with the first one focused, the rule
// between the API address fields before the key is given, an account domain that
// does not resolve, and named checkboxes for the resources.
func TestSetupPageProblemsInBrowser(t *testing.T) {
	b := newBrowser(t)
	api, calls := fakeAPI(t)
	file := filepath.Join(t.TempDir(), "callbus.json")
	h, err := New(Options{ValuesFile: file, Client: unknownDomainClient()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	b.do("open the page", chromedp.Navigate(srv.URL+Path))
	b.waitFor("page ready", `document.documentElement.dataset.ready === "true"`)
	checkSections(t, b)

	// Real key presses into two number fields of collapsed sections, opened by a
	// click on their titles: what was typed stays, with an error at once.
	for key, typed := range map[string]string{"rate_limit_share": "eighty", "calls_interval_seconds": "abc"} {
		b.do("open the section of "+key, chromedp.Click(chromedp.CSS(`#g-`+sectionOf(t, key)+` > summary`)))
		b.typeInto(key, typed)
		b.waitFor(key+" refused as typed", errorOf(key)+` === "must be a whole number, not \u201c`+typed+`\u201d"`+
			` && document.getElementById("f-`+key+`").value === "`+typed+`"`)
		b.do("close the section again", chromedp.Click(chromedp.CSS(`#g-`+sectionOf(t, key)+` > summary`)))
	}

	installWithProblems(t, b)
	b.screenshot("problems")

	// A name in the list leads to its field.
	b.do("follow a link", chromedp.Click(chromedp.CSS(`#form-errors a[href="#f-calls_interval_seconds"]`)))
	b.waitFor("link focuses its field", `document.activeElement.id === "f-calls_interval_seconds"`)
	b.waitFor("linked field on screen", focusedOnScreen)
	b.screenshot("link")

	// An account domain that does not resolve, said plainly.
	b.typeInto("api_domain", "acme")
	b.typeInto("api_key", goodKey)
	b.typeInto("rate_limit_share", "70")
	b.typeInto("calls_interval_seconds", "7")
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("unknown host", errorOf("api_domain")+` === "could not reach acme.mycallcenter.com: unknown host (check the address or the account name)"`)
	b.waitFor("domain focused", `document.activeElement.id === "f-api_domain"`)
	b.screenshot("unknown-host")

	// The URL instead: saved, with the numbers as typed.
	b.change("api_domain", `el.value = ""`)
	b.typeInto("api_url", api.URL)
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("saved", `document.getElementById("result").textContent.includes("Saved to")`)
	if calls.Load() != 1 {
		t.Errorf("%d API requests, want 1 (the check endpoint never calls the API)", calls.Load())
	}
	s, err := config.Load(func(string) string { return "" }, file)
	if err != nil {
		t.Fatal(err)
	}
	if s.RateLimitShare != 0.7 || s.CallsInterval != 7*time.Second || s.Account != "acme" {
		t.Errorf("saved share %v, calls interval %v, account %q; want 0.7, 7s, acme", s.RateLimitShare, s.CallsInterval, s.Account)
	}
}

// installWithProblems presses INSTALL at the top of the page with the required
// fields empty and two numbers refused: nothing is saved; every problem is listed
// by name next to the button, the API address rule included, the sections with
// problems open, the first field focused.
func installWithProblems(t *testing.T, b *browser) {
	t.Helper()
	b.eval(`window.scrollTo(0, 0)`)
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("problems listed", `document.querySelectorAll("#form-errors li").length === 5`)
	summary := b.eval(`document.getElementById("form-errors").innerText`)
	for _, want := range []string{
		"Nothing was saved. Correct these 5 problems:",
		"API base URL: required unless Account domain is set",
		"API key: required",
		"Account: required",
		"Share of the API rate limit (%): must be a whole number, not \u201ceighty\u201d",
		"New calls interval (seconds): must be a whole number, not \u201cabc\u201d",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the list near INSTALL lacks %q:\n%s", want, summary)
		}
	}
	b.waitFor("first problem focused", `document.activeElement.id === "f-api_url"`)
	b.waitFor("focused field on screen", focusedOnScreen)
	b.waitFor("list next to the button", `document.getElementById("install").getBoundingClientRect().top - `+
		`document.getElementById("form-errors").getBoundingClientRect().bottom < 40`)
	b.waitFor("sections with problems open", `document.getElementById("g-api").open && document.getElementById("g-polling").open`+
		` && document.getElementById("ge-polling").textContent === "1 to correct"`)
}

// checkSections checks the page's layout: the sections in order, the required
// fields first, the advanced sections closed, the resources as named checkboxes.
func checkSections(t *testing.T, b *browser) {
	t.Helper()
	for expr, want := range map[string]string{
		`Array.from(document.querySelectorAll("details.group")).map(function (d) { return d.id + (d.open ? "+" : "-"); }).join()`: "g-required+,g-nats+,g-redis+,g-data_policy+,g-api-,g-stream-,g-polling-,g-operations-",
		`Array.from(document.querySelectorAll("#g-required .field")).map(function (f) { return f.dataset.key; }).join()`:          "api_url,api_domain,api_key,account,resources",
		`Array.from(document.querySelectorAll("#f-resources label")).map(function (l) { return l.textContent.trim(); }).join()`:   "Calls,Call metrics,Users,User statuses,Teams",
		checkedIn("resources"): "calls,call_metrics,users,user_statuses,teams",
	} {
		if got := b.eval(expr); got != want {
			t.Errorf("%s:\n got %s\nwant %s", expr, got, want)
		}
	}
}

// sectionOf is the id of the section of a field on the page.
func sectionOf(t *testing.T, key string) string {
	t.Helper()
	d, err := config.Declarations()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := d.Param(key)
	if !ok {
		t.Fatalf("no parameter %s", key)
	}
	return groupOf(p)
}
