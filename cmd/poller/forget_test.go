package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/policy"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/testkit/redistest"
)

// poller forget reads the account's policy, so it finds a caller's number as
// the policy hashed it; it wants --user or --phone, and releases the lease.
func TestForgetCommand(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client(t)
	keyFile := filepath.Join(t.TempDir(), "hash.key")
	const key = "forget-command-key-0123456789"
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"CALLBUS_ACCOUNT": "acme", "CALLBUS_API_URL": "http://127.0.0.1:1", "CALLBUS_API_KEY": "k",
		"CALLBUS_REDIS_URL": rs.URL, "CALLBUS_LEASE_TTL_SECONDS": "3", "CALLBUS_INSTANCE_ID": "ops",
		"CALLBUS_DATA_POLICY": "no_personal_data", "CALLBUS_DATA_POLICY_HASH_KEY_FILE": keyFile}
	pol, err := policy.New(policy.Rules{Preset: policy.PresetNoPersonalData}, secret.New(key), "acme")
	if err != nil {
		t.Fatal(err)
	}
	store, err := cursor.New(rdb, "acme")
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.Acquire(t.Context(), "writer", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"caller_number":"` + pol.HashValue("+12125550142") + `"}`
	if _, err := store.Commit(t.Context(), l, cursor.Batch{Events: []event.Message{{ID: "e1", Subject: "callcenter.acme.participant.joined", Data: []byte(body)}}}); err != nil {
		t.Fatal(err)
	}
	if err := store.Release(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	forget := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), append([]string{"forget"}, args...), env(vars), &out, &errOut)
		return out.String(), err
	}
	for _, args := range [][]string{{"--phone", "+1"}, {"--account", "acme"}, {"--account", "acme", "--user", "8", "--phone", "+1"}} {
		var ec exitCode
		if _, err := forget(args...); !errors.As(err, &ec) || ec.code != 2 {
			t.Errorf("forget %v: %v, want exit status 2", args, err)
		}
	}
	out, err := forget("--account", "acme", "--phone", "+12125550142")
	if err != nil || !strings.Contains(out, "1 outbox entries") {
		t.Fatalf("forget --phone: %q, %v; want the one outbox entry holding its hash", out, err)
	}
	if n, err := rdb.Exists(t.Context(), store.KeyPrefix()+"lease").Result(); err != nil || n != 0 {
		t.Errorf("the command's lease is still held (%d, %v)", n, err)
	}
	if strings.Contains(out, key) {
		t.Error("the key in the output")
	}
}
