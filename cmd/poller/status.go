package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/callbus/callbus/internal/service"
)

// runStatus is `poller status [--addr HOST:PORT]`: it reads GET /status (JSON) of
// a running poller and prints it for a terminal. The address defaults to
// CALLBUS_HTTP_ADDR, then the service's default :8081, on loopback when no host
// is given.
func runStatus(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("status", "usage: poller status [--addr HOST:PORT] [--json]\n\nPrints a running poller's status page (GET /status on its http_addr) for a terminal.\n", stderr)
	def := getenv("CALLBUS_HTTP_ADDR")
	if def == "" {
		def = ":8081"
	}
	addr := fs.String("addr", def, "the poller's HTTP address (http_addr)")
	asJSON := fs.Bool("json", false, "print the status as JSON (the fields of GET /status?format=json)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	host := *addr
	if strings.HasPrefix(host, ":") {
		host = "127.0.0.1" + host
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/status?format=json", nil)
	if err != nil {
		return exitCode{2, fmt.Errorf("status: %w", err)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("status: no poller answers at %s (connection refused): start one with `poller run`, "+
				"or give the address of its http_addr with --addr or CALLBUS_HTTP_ADDR", host)
		}
		return fmt.Errorf("status: no answer from a poller at %s (%w): check the address (--addr, CALLBUS_HTTP_ADDR) "+
			"and that the poller's http_addr is reachable from here", host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status: GET %s: %s", req.URL, resp.Status)
	}
	var st service.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return fmt.Errorf("status: decode %s: %w", req.URL, err)
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	return st.WriteText(stdout)
}
