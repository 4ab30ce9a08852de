package cursor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/testkit/redistest"
)

func TestCheckConfig(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantErr  error
		wantWarn string
	}{
		{"no persistence", nil, nil, "no persistence"},
		{"rdb only", []string{"--save", "60 1"}, nil, "RDB snapshots only"},
		{"aof everysec", []string{"--appendonly", "yes", "--appendfsync", "everysec"}, nil, ""},
		{"evicting", []string{"--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"}, cursor.ErrEvictingRedis, ""},
		{"volatile evicting", []string{"--maxmemory-policy", "volatile-lru"}, cursor.ErrEvictingRedis, ""},
		{"config renamed away", []string{"--rename-command", "CONFIG", ""}, nil, "cannot read the Redis settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.StartWithArgs(t, tt.args...)
			st, err := cursor.New(srv.Client(t), "acme")
			if err != nil {
				t.Fatal(err)
			}
			c, err := st.CheckConfig(t.Context())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CheckConfig err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			w := strings.Join(c.Warnings(), "; ")
			if (tt.wantWarn == "") != (w == "") || !strings.Contains(w, tt.wantWarn) {
				t.Fatalf("warnings %q, want one containing %q", w, tt.wantWarn)
			}
		})
	}
}

// No Redis answering is not advice about its settings: it says so, and names
// nothing it could not know (eviction, persistence).
func TestCheckConfigUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	st, err := cursor.New(rdb, "acme")
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	c, err := st.CheckConfig(t.Context())
	if err != nil {
		t.Fatalf("CheckConfig: %v, want warnings only (the service must start while Redis is away)", err)
	}
	w := strings.Join(c.Warnings(), "; ")
	if c.Unreachable == "" || !strings.Contains(w, "no Redis answers") || strings.Contains(w, "maxmemory") || strings.Contains(w, "AOF") {
		t.Fatalf("Unreachable %q, warnings %q: want no Redis answers, without advice about its settings", c.Unreachable, w)
	}
}
