package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// With Redis and NATS unreachable, every line the service writes is JSON: what
// go-redis reports on its own (failed dials) goes through the logger, and so does
// the warning about an unknown CALLBUS_ variable.
func TestDriverLogsAreJSON(t *testing.T) {
	t.Setenv("CALLBUS_CALS_INTERVAL_SECONDS", "3")
	vars := map[string]string{
		"CALLBUS_API_URL": "http://" + closedAddr(t), "CALLBUS_API_KEY": "k", "CALLBUS_ACCOUNT": "acme",
		"CALLBUS_REDIS_URL": "redis://" + closedAddr(t) + "/0", "CALLBUS_NATS_URL": "nats://" + closedAddr(t),
		"CALLBUS_HTTP_ADDR": "127.0.0.1:0", "CALLBUS_LOG_LEVEL": "debug",
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut simtest.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"run"}, env(vars), &out, &errOut) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), `"component":"redis"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no go-redis report in the log:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the service did not stop")
	}
	for l := range strings.Lines(errOut.String()) {
		if !json.Valid([]byte(l)) {
			t.Errorf("not a JSON line: %q", l)
		}
	}
	// The test's environment may hold other CALLBUS_ variables of the test
	// tooling (make test sets some): the warning must name this one among them.
	if !strings.Contains(errOut.String(), `"variables":[`) || !strings.Contains(errOut.String(), `"CALLBUS_CALS_INTERVAL_SECONDS"`) {
		t.Errorf("no warning about the unknown variable:\n%s", errOut.String())
	}
	if out.String() != "" {
		t.Errorf("stdout: %q", out.String())
	}
}

// The demo on a real Redis removes its own keys at start and on exit, and leaves
// everything else alone.
func TestDemoRedisCleanup(t *testing.T) {
	srv := redistest.StartPrivate(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	for _, k := range []string{"callbus:{demo}:stale", "callbus:{acme}:cursor", "mine"} {
		if err := rdb.Set(ctx, k, "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut := runDemoUntilCalls(t, map[string]string{"CALLBUS_REDIS_URL": srv.URL})
	checkDemoOutput(t, out, errOut)
	if !strings.Contains(errOut, "old_keys_removed=1") || !strings.Contains(errOut, "keys removed") {
		t.Errorf("the demo does not say it removed its keys:\n%s", errOut)
	}
	left, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(left, ",") != "callbus:{acme}:cursor,mine" && strings.Join(left, ",") != "mine,callbus:{acme}:cursor" {
		t.Errorf("keys left: %v, want the user's two", left)
	}
}
