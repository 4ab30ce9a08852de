package setup

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/iparams"
	"github.com/rs/zerolog"
)

// Path is where the page is served, as on the kit's test server.
const Path = "/custom_configs"

//go:embed assets
var assets embed.FS

// Options configure a Handler.
type Options struct {
	// ValuesFile is the values file to prefill the page from (when it exists) and to
	// save to at INSTALL. Required.
	ValuesFile string
	// Client makes the API check at INSTALL. Nil means a client with a 15-second
	// timeout. Redirects are never followed (the key must not go elsewhere).
	Client *http.Client
	// Logger records each INSTALL's outcome (never a value).
	Logger zerolog.Logger
	// Declarations and Script are the parameters and their callbacks; nil means
	// the poller's (config.Declarations, config.Script).
	Declarations *iparams.Declarations
	Script       []byte
	// Rules checks the rules between parameters on the values that passed their
	// own (the others are unset), so that INSTALL and the page's check list them
	// with the problems of single fields. Nil means the poller's (config.FromValues)
	// with the poller's declarations, and none with other declarations.
	Rules func(v *iparams.Values) iparams.Problems
	// Verify checks values that broke no rule before they are saved. Nil means the
	// poller's checks: the rules between parameters again (to derive the API
	// address) and one authenticated API request (see the package doc).
	Verify func(ctx context.Context, v *iparams.Values) iparams.Problems
}

// Handler serves the page, its scripts and the INSTALL endpoint. It is safe for
// concurrent use; installs are serialized.
type Handler struct {
	opts   Options
	decl   *iparams.Declarations
	script []byte
	page   *template.Template
	mux    *http.ServeMux
	saving chan struct{} // a one-slot lock around read-merge-write of the file
}

// New builds a Handler for the poller's declarations (config.Declarations).
func New(opts Options) (*Handler, error) {
	if opts.ValuesFile == "" {
		return nil, errors.New("setup: a values file is required")
	}
	d, script := opts.Declarations, opts.Script
	if d == nil && opts.Rules == nil {
		opts.Rules = pollerRules
	}
	if d == nil {
		var err error
		if d, err = config.Declarations(); err != nil {
			return nil, fmt.Errorf("setup: %w", err)
		}
	}
	if script == nil {
		script = config.Script()
	}
	page, err := template.New("page.html").Funcs(template.FuncMap{"fieldID": fieldID}).
		ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, fmt.Errorf("setup: parse page template: %w", err)
	}
	client := &http.Client{Timeout: 15 * time.Second}
	if opts.Client != nil {
		c := *opts.Client
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h := &Handler{opts: opts, decl: d, script: script, page: page,
		mux: http.NewServeMux(), saving: make(chan struct{}, 1)}
	if h.opts.Verify == nil {
		h.opts.Verify = pollerChecks(client)
	}
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Path, http.StatusSeeOther)
	})
	h.mux.HandleFunc("GET "+Path, h.servePage)
	h.mux.HandleFunc("POST "+Path+"/install", h.serveInstall(true))
	h.mux.HandleFunc("POST "+Path+"/check", h.serveInstall(false))
	h.mux.HandleFunc("GET "+Path+"/iparams.js", h.serveAsset("", "text/javascript; charset=utf-8"))
	for _, js := range []string{"fields.js", "setup.js"} {
		h.mux.HandleFunc("GET "+Path+"/"+js, h.serveAsset("assets/"+js, "text/javascript; charset=utf-8"))
	}
	h.mux.HandleFunc("GET "+Path+"/setup.css", h.serveAsset("assets/setup.css", "text/css; charset=utf-8"))
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	h.mux.ServeHTTP(w, r)
}

// serveAsset serves an embedded file, or iparams.js for name "".
func (h *Handler) serveAsset(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data := h.script
		if name != "" {
			var err error
			if data, err = assets.ReadFile(name); err != nil {
				http.Error(w, "asset missing", http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(data)
	}
}

// fieldID is the id of a parameter's input element.
func fieldID(key string) string { return "f-" + key }
