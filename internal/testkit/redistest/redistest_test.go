package redistest

import "testing"

func TestStartRestart(t *testing.T) {
	s := StartPrivate(t)
	c := s.Client(t)
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	if n, err := c.Exists(t.Context(), "k").Result(); err != nil || n != 0 {
		t.Fatalf("after restart: exists=%d err=%v, want 0 nil (a crash loses data)", n, err)
	}
}

func TestDurableRestartKeepsData(t *testing.T) {
	s := StartDurable(t)
	c := s.Client(t)
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	if v, err := c.Get(t.Context(), "k").Result(); err != nil || v != "v" {
		t.Fatalf("after restart: %q %v, want the value kept", v, err)
	}
}
