package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/service"
)

const debugUsage = `usage: poller debug bundle [--out FILE] [--addr HOST:PORT] [--log FILE] [--log-lines N] [--config FILE]

Writes one zip to attach to a bug report: version and build info, the effective
configuration with every secret redacted, the running poller's /status and
/metrics (and goroutine and heap profiles when debug_pprof is on), poller state
--json of every account, the last lines of a log file when given, Redis INFO and
CONFIG GET of the settings callbus checks, and the stream's info. What could not
be collected is listed in problems.txt. Every secret value of the configuration
(API keys, Redis and NATS passwords, passwords in URLs) is scrubbed from every
file before it is written.
`

// runDebug is `poller debug bundle`.
func runDebug(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("debug bundle", debugUsage, stderr)
	if len(args) == 0 || args[0] != "bundle" {
		if len(args) > 0 && wantsHelp(args[:1]) {
			return parseFlags(fs, args, stdout)
		}
		fs.Usage()
		return exitCode{2, fmt.Errorf("debug: want bundle")}
	}
	file := fs.String("config", "", "JSON values `FILE` (see `poller config docs`)")
	out := fs.String("out", "", "the zip `FILE` to write (default callbus-debug-<time>.zip in the current directory)")
	def := getenv("CALLBUS_HTTP_ADDR")
	if def == "" {
		def = ":8081"
	}
	addr := fs.String("addr", def, "the running poller's HTTP address (http_addr), for /status, /metrics and profiles")
	logFile := fs.String("log", "", "a log `FILE` of the poller whose last lines to include")
	logLines := fs.Int("log-lines", 2000, "how many of the log file's last lines (`N`)")
	if err := parseFlags(fs, args[1:], stdout); err != nil {
		return err
	}
	s, err := loadConfig(getenv, *file)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = "callbus-debug-" + time.Now().UTC().Format("20060102T150405Z") + ".zip"
	}
	b := &bundle{files: map[string][]byte{}}
	b.add("version.txt", []byte(buildInfo()))
	accounts, err := stateAccounts(ctx, s, getenv, *file, "")
	if err != nil {
		b.problem("accounts: %v", err)
	}
	cfg := map[string]any{"process": s.LogFields()}
	for _, a := range accounts {
		cfg["account "+a.Account] = a.LogFields()
	}
	b.addJSON("config.json", cfg)
	if states, err := service.ReadState(ctx, s, accounts); err != nil {
		b.problem("state: %v", err)
	} else {
		b.addJSON("state.json", states)
	}
	host := *addr
	if strings.HasPrefix(host, ":") {
		host = "127.0.0.1" + host
	}
	b.fetch(ctx, "status.json", "http://"+host+"/status?format=json")
	b.fetch(ctx, "metrics.txt", "http://"+host+"/metrics")
	if s.DebugPprof {
		b.fetch(ctx, "pprof/goroutine.txt", "http://"+host+"/debug/pprof/goroutine?debug=2")
		b.fetch(ctx, "pprof/heap.pb.gz", "http://"+host+"/debug/pprof/heap")
	}
	if *logFile != "" {
		if lines, err := lastLines(*logFile, *logLines); err != nil {
			b.problem("log: %v", err)
		} else {
			b.add("log.txt", lines)
		}
	}
	files, problems := service.Diagnostics(ctx, s)
	for name, data := range files {
		b.add(name, data)
	}
	b.problems = append(b.problems, problems...)
	secrets := service.Secrets(append([]config.Settings{s}, accounts...)...)
	if err := b.write(*out, secrets); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (%d files, %d problems listed in problems.txt)\n", *out, len(b.files), len(b.problems))
	return err
}

// bundle is the files of a debug bundle and what could not be collected.
type bundle struct {
	files    map[string][]byte
	problems []string
}

func (b *bundle) add(name string, data []byte) { b.files[name] = data }

func (b *bundle) addJSON(name string, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b.problem("%s: %v", name, err)
		return
	}
	b.add(name, data)
}

func (b *bundle) problem(format string, args ...any) {
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// fetch adds the body of GET url as name.
func (b *bundle) fetch(ctx context.Context, name, url string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		b.problem("%s: %v", name, err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.problem("%s: no poller answers (%v): give its http_addr with --addr", name, err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		b.problem("%s: GET %s: %s %v", name, url, resp.Status, err)
		return
	}
	b.add(name, data)
}

// write zips the files and problems.txt to path, each scrubbed of secrets.
func (b *bundle) write(path string, secrets []string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("debug bundle: %w (choose another --out)", err)
	}
	z := zip.NewWriter(f)
	b.add("problems.txt", []byte(strings.Join(b.problems, "\n")+"\n"))
	names := make([]string, 0, len(b.files))
	for n := range b.files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w, err := z.Create(n)
		if err == nil {
			_, err = w.Write(scrub(b.files[n], secrets))
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("debug bundle %s: %w", path, err)
		}
	}
	if err := z.Close(); err != nil {
		f.Close()
		return fmt.Errorf("debug bundle %s: %w", path, err)
	}
	return f.Close()
}

// scrub replaces each secret in data with [REDACTED]. Compressed profiles are
// left as they are: a heap profile holds stacks and sizes, no values.
func scrub(data []byte, secrets []string) []byte {
	for _, s := range secrets {
		if len(s) >= 4 {
			data = bytes.ReplaceAll(data, []byte(s), []byte("[REDACTED]"))
		}
	}
	return data
}

// lastLines is the last n lines of the file at path.
func lastLines(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ring := make([]string, 0, n)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if len(ring) == n {
			ring = ring[1:]
		}
		ring = append(ring, sc.Text())
	}
	return []byte(strings.Join(ring, "\n") + "\n"), sc.Err()
}

// buildInfo is the version and what the Go toolchain recorded of the build.
func buildInfo() string {
	var b strings.Builder
	fmt.Fprintf(&b, "callbus poller %s\n%s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "module %s %s\n", bi.Main.Path, bi.Main.Version)
		for _, s := range bi.Settings {
			fmt.Fprintf(&b, "%s=%s\n", s.Key, s.Value)
		}
	}
	return b.String()
}
