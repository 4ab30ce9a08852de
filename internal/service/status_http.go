package service

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
)

//go:embed status.html
var statusHTML string

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"dur":  fmtSeconds,
	"ago":  ago,
	"pct":  func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
	"used": usedRatio,
}).Parse(statusHTML))

// routes serves GET /status (HTML for people; JSON with ?format=json or an Accept
// of application/json) and hands every other path to next.
func (b *statusBoard) routes(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", b.serveStatus)
	mux.Handle("/", next)
	return mux
}

func (b *statusBoard) serveStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Second)
	defer cancel()
	st := b.snapshot(ctx)
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(st) // the client went away
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := statusPage.Execute(w, st); err != nil {
		http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
	}
}

// fmtSeconds shows a duration in seconds as a person reads it: 40ms, 5s, 2m30s.
func fmtSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d <= 0:
		return "–"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return strings.TrimSuffix(d.Round(time.Second).String(), "0s")
}

// ago is how long before now t was, to the second.
func ago(now, t time.Time) string {
	d := now.Sub(t).Round(time.Second)
	if d < time.Second {
		return "just now"
	}
	return fmtSeconds(d.Seconds()) + " ago"
}

// usedRatio is the share of the budget used in the last window (0 when unknown).
func usedRatio(b BudgetStatus) float64 {
	if b.Budget == 0 {
		return 0
	}
	return float64(b.UsedInWindow) / float64(b.Budget)
}
