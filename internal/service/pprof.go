package service

import (
	"net/http"
	"net/http/pprof"
)

// withPprof serves Go's profiling endpoints under /debug/pprof/ in front of h when
// on (the debug_pprof setting), and h alone otherwise. They are opt-in because
// they show the process's internals and a profile costs CPU while it is taken.
// The handlers are mounted on a mux of their own: importing net/http/pprof also
// registers them on http.DefaultServeMux, which callbus never serves.
func withPprof(on bool, h http.Handler) http.Handler {
	if !on {
		return h
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // also heap, goroutine, allocs, block, mutex, threadcreate
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.Handle("/", h)
	return mux
}
