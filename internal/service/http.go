package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// readiness fills /readyz's body with this replica's role and names why it is
// not ready ("" when it is), beyond Redis answering.
type readiness func(body map[string]any) (why string)

// singleReady is the readiness of a single-account replica: ready while polling
// is not paused (paused says why when it is); the body says whether this replica
// leads or stands by — a standby is ready.
func singleReady(a *account) readiness {
	return func(body map[string]any) string {
		body["role"], body["instance"] = "standby", a.lead.Holder()
		if a.lead.IsLeader() {
			body["role"] = "leader"
		}
		return a.session.work.poller.Paused()
	}
}

// healthHandler serves /healthz (the process is alive), /readyz (Redis answers
// and ready names no problem) and /metrics.
func healthHandler(rdb redis.UniversalClient, ready readiness, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		body := map[string]any{}
		why := ready(body)
		status := http.StatusOK
		if err := rdb.Ping(ctx).Err(); err != nil {
			status, body["error"] = http.StatusServiceUnavailable, "redis unreachable"
		}
		if why != "" {
			status, body["error"] = http.StatusServiceUnavailable, why
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	})
	return mux
}

// serveHTTP listens on addr and serves h until the returned stop is called.
func serveHTTP(addr string, h http.Handler, log zerolog.Logger) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("http server")
		}
	}()
	log.Info().Str("addr", l.Addr().String()).Msg("serving /healthz /readyz /metrics /status")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
