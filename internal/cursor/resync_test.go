package cursor

import (
	"reflect"
	"testing"
	"time"
)

// A resync request goes from the queue to the running list when a leader takes
// it; a leader that dies meanwhile leaves it there and the next one takes the
// same run again; a final report ends it; a queued run can be withdrawn, a
// taken one cannot.
func TestResyncQueue(t *testing.T) {
	e := newEnv(t)
	s := e.store
	ctx := ctxT(t)
	since := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	want := ResyncRequest{Run: "r1", Resources: []string{"users", "calls"}, Entity: "", Since: since}
	for _, r := range []ResyncRequest{want, {Run: "r2", Resources: []string{"teams"}}, {Run: "r3", Resources: []string{"calls"}, Entity: "calls/812"}} {
		if err := s.RequestResync(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.WithdrawResync(ctx, "r2"); err != nil || !ok {
		t.Fatalf("withdraw a queued run: %v %v", ok, err)
	}
	got, ok, err := s.TakeResync(ctx)
	if err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("take: %+v %v %v, want %+v", got, ok, err, want)
	}
	if ok, _ := s.WithdrawResync(ctx, "r1"); ok {
		t.Error("withdrew a run a leader took")
	}
	// The leader dies: the next takes r1 again, not r3.
	if again, ok, err := s.TakeResync(ctx); err != nil || !ok || again.Run != "r1" {
		t.Fatalf("take after a dead leader: %+v %v %v, want r1 again", again, ok, err)
	}
	if err := s.ReportResync(ctx, "r1", ResyncProgress{State: ResyncDone, Holder: "a", Entities: 7, Requests: 2}); err != nil {
		t.Fatal(err)
	}
	p, ok, err := s.ResyncStatus(ctx, "r1")
	if err != nil || !ok || p.State != ResyncDone || p.Entities != 7 || p.Requests != 2 || p.Holder != "a" {
		t.Errorf("status %+v %v %v", p, ok, err)
	}
	next, ok, err := s.TakeResync(ctx)
	if err != nil || !ok || next.Run != "r3" || next.Entity != "calls/812" {
		t.Fatalf("take after done: %+v %v %v, want r3", next, ok, err)
	}
	if err := s.ReportResync(ctx, "r3", ResyncProgress{State: ResyncFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.TakeResync(ctx); err != nil || ok {
		t.Errorf("take from an empty queue: %v %v", ok, err)
	}
	if _, ok, _ := s.ResyncStatus(ctx, "r2"); ok {
		t.Error("a withdrawn run kept its record")
	}
}
