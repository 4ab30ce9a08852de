package service

import (
	"context"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/testenv"
	"github.com/chromedp/chromedp"
)

// The status page of a running service in headless Chromium, as a person sees
// it: role, leader, a row per resource, events; saved as
// CALLBUS_STATUS_SCREENSHOT-status.png when that variable names a path prefix
// (`make test` keeps it in bin/).
func TestStatusPageInBrowser(t *testing.T) {
	ctx := testenv.Browser(t, "the status page was not tested in a browser", 1280, 900)
	r := startRunning(t, "browser-1", nil)
	r.advance(t, 20)
	simtest.WaitFor(t, 30*time.Second, "events and the limit on /status", func() bool {
		var st Status
		return decodeStatus(r.get(t, "/status?format=json", ""), &st) == nil &&
			len(st.Accounts[0].Events) > 0 && st.Accounts[0].Budget.Limit > 0
	})
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[string]("String("+expr+")"))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	run("open /status", chromedp.Navigate("http://"+r.s.HTTPAddr+"/status"), chromedp.WaitVisible("#resources"))
	checks := []struct{ expr, want string }{
		{`document.getElementById("role").textContent`, "leader"},
		{`document.querySelector("#leader code").textContent === document.getElementById("instance").textContent`, "true"},
		{`document.querySelectorAll("#resources tr[data-resource]").length`, "5"},
		{`document.querySelectorAll("#events tr").length > 1`, "true"},
		{`document.getElementById("budget-used").textContent.includes("/ ?")`, "false"},
		// read at a glance: nothing wider than the window
		{`document.documentElement.scrollWidth <= window.innerWidth`, "true"},
	}
	for _, c := range checks {
		if got := eval(c.expr); got != c.want {
			t.Errorf("%s = %s, want %s", c.expr, got, c.want)
		}
	}
	if n, _ := strconv.Atoi(eval(`document.body.innerText.length`)); n < 200 {
		t.Errorf("page shows %d characters of text", n)
	}
	testenv.Screenshot(t, ctx, "CALLBUS_STATUS_SCREENSHOT", "status")
}
