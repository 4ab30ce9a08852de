package cursor

import (
	"testing"
	"time"
)

// LeaseInfo gives the term's start by the Redis clock, kept across renewals and
// a re-acquire by the same holder, new for the next holder; requests are taken
// once, oldest first, or cancelled while queued; the audit list keeps the newest
// 100, newest first.
func TestOpsLeaseRequestsAudit(t *testing.T) {
	e := newEnv(t)
	s := e.store
	if li, err := s.LeaseInfo(ctxT(t)); err != nil || li.Holder != "" {
		t.Fatalf("no lease: %+v %v", li, err)
	}
	before := time.Now().Add(-time.Second)
	l := mustAcquire(t, s, "a", time.Minute)
	li, err := s.LeaseInfo(ctxT(t))
	if err != nil || li.Holder != "a" || li.Token != l.Token || li.Since.Before(before) || li.Since.After(time.Now().Add(time.Second)) || li.TTL <= 0 {
		t.Fatalf("lease info %+v (%v), want a, token %d, since about now", li, err, l.Token)
	}
	if err := s.Renew(ctxT(t), l); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, s, "a", time.Minute)
	if again, _ := s.LeaseInfo(ctxT(t)); !again.Since.Equal(li.Since) {
		t.Errorf("term start moved on renewal: %v then %v", li.Since, again.Since)
	}

	r1 := Request{ID: "1", Verb: "rewind", Resource: "calls", To: time.Unix(100, 0).UTC(), By: "op@host"}
	r2 := Request{ID: "2", Verb: "rewind", Resource: "calls"}
	r3 := Request{ID: "3", Verb: "rewind", Resource: "calls"}
	for _, r := range []Request{r1, r2, r3} {
		if err := s.PushRequest(ctxT(t), r); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.CancelRequest(ctxT(t), r2); err != nil || !ok {
		t.Fatalf("cancel a queued request: %v %v", ok, err)
	}
	if n, err := s.PendingRequests(ctxT(t)); err != nil || n != 2 {
		t.Errorf("pending %d (%v), want 2", n, err)
	}
	got, err := s.TakeRequests(ctxT(t))
	if err != nil || len(got) != 2 || got[0] != r1 || got[1].ID != "3" {
		t.Fatalf("taken %+v (%v), want 1 then 3", got, err)
	}
	if again, err := s.TakeRequests(ctxT(t)); err != nil || len(again) != 0 {
		t.Errorf("taken twice: %+v %v", again, err)
	}
	if ok, _ := s.CancelRequest(ctxT(t), r1); ok {
		t.Error("cancelled a request already taken")
	}

	for i := range 105 {
		if err := s.Audit(ctxT(t), AuditEntry{At: time.Unix(int64(i), 0).UTC(), Verb: "rewind", Result: "done"}); err != nil {
			t.Fatal(err)
		}
	}
	log, err := s.AuditLog(ctxT(t), 1000)
	if err != nil || len(log) != 100 || log[0].At.Unix() != 104 || log[99].At.Unix() != 5 {
		t.Errorf("audit log: %d entries, newest %v, oldest %v (%v); want the newest 100", len(log), log[0].At, log[len(log)-1].At, err)
	}
}
