package callcenter_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
)

// TestSimRecordings downloads (the redirect is returned, not followed) and deletes
// a recording; a second delete is a 404.
func TestSimRecordings(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	call := callWithRecording(t, allCalls(ctx, t, c, p))
	recID := call.Recording.ID

	before := len(p.attempts())
	loc, err := c.DownloadRecording(ctx, call.ID, recID)
	must(t, p, "download recording", err)
	if !strings.HasPrefix(loc, e.srv.URL+"/recordings/") || !strings.Contains(loc, strconv.FormatInt(recID, 10)) {
		t.Errorf("location %q: want a URL of recording %d on the server", loc, recID)
	}
	if got := p.attempts()[before:]; len(got) != 1 || got[0].Status != http.StatusFound {
		t.Errorf("attempts %+v: want one answered 302", got)
	}
	if n := e.served("recordings"); n != 0 {
		t.Errorf("%d requests for recording files: the redirect must not be followed", n)
	}

	deleted, err := c.DeleteRecording(ctx, call.ID, recID)
	must(t, p, "delete recording", err)
	if !deleted {
		t.Error("delete recording: status false, want true")
	}
	again, err := c.DeleteRecording(ctx, call.ID, recID)
	var ae *callcenter.APIError
	if !errors.As(p.keep(err), &ae) || ae.Status != http.StatusNotFound || ae.Type != callcenter.ErrorTypeNotFound || !callcenter.IsNotFound(err) {
		t.Errorf("second delete: %v, %v; want a 404 %s", again, err, callcenter.ErrorTypeNotFound)
	}
	if _, err := c.DownloadRecording(ctx, call.ID, recID); !callcenter.IsNotFound(p.keep(err)) {
		t.Errorf("download after delete: %v, want a 404", err)
	}
	after, err := c.GetCall(ctx, call.ID)
	must(t, p, "get call after delete", err)
	if after.Recording != nil {
		t.Errorf("call %d still has recording %+v", call.ID, after.Recording)
	}
}
