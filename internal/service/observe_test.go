package service

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/telemetry"
	"github.com/redis/go-redis/v9"
)

// The shared Redis client's failures are counted for the account the command's
// context names, and unlabelled for the process's own commands; a missing key is
// no failure.
func TestRedisErrorsByAccount(t *testing.T) {
	m, err := telemetry.NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	h := redisErrors{m}
	acme := telemetry.ContextWithAccount(t.Context(), "acme")
	h.count(acme, errors.New("i/o timeout"))
	h.count(acme, redis.Nil)
	h.count(t.Context(), errors.New("connection refused"))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`callbus_redis_errors_total{account="acme"} 1`, "callbus_redis_errors_total 1"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, rec.Body.String())
		}
	}
}
