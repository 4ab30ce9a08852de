package cursor

import (
	"testing"
)

// Look writes the notes and reads only what it is asked: the queues' lengths
// (a request queued, a resync queued then running) and the outbox's length.
func TestLook(t *testing.T) {
	e := newEnv(t)
	s := e.store
	if w, err := s.Look(ctxT(t), Look{}); err != nil || w != (Waiting{}) {
		t.Fatalf("nothing asked: %+v %v", w, err)
	}
	w, err := s.Look(ctxT(t), Look{Notes: map[string]string{"cycle.calls": "t1"}, Outbox: true, Queues: true})
	if err != nil || w != (Waiting{}) {
		t.Fatalf("an empty account: %+v %v, want nothing waiting", w, err)
	}
	if ops, _ := s.Ops(ctxT(t)); ops["cycle.calls"] != "t1" {
		t.Errorf("ops %v, want cycle.calls t1", ops)
	}
	if err := s.PushRequest(ctxT(t), Request{ID: "1", Verb: "rewind", Resource: "calls"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestResync(ctxT(t), ResyncRequest{Run: "r1", Resources: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if w, err = s.Look(ctxT(t), Look{Queues: true}); err != nil || w.Requests != 1 || !w.Resync {
		t.Fatalf("queued: %+v %v, want a request and a resync", w, err)
	}
	if w, _ = s.Look(ctxT(t), Look{Outbox: true}); w.Requests != 0 || w.Resync {
		t.Errorf("queues read unasked: %+v", w)
	}
	if _, ok, err := s.TakeResync(ctxT(t)); err != nil || !ok {
		t.Fatalf("take the resync: %v %v", ok, err)
	}
	if w, _ = s.Look(ctxT(t), Look{Queues: true}); !w.Resync {
		t.Errorf("a running resync not seen: %+v", w)
	}
}
