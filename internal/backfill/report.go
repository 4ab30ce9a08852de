package backfill

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/callbus/callbus/internal/callcenter"
)

// reportError is a report that cannot be read as one: not a zip or JSON object,
// a zip without the report, none of the requested resources, or JSON that ends
// or breaks midway. A new export job may serve a good one (see jobError).
type reportError struct{ err error }

func (e *reportError) Error() string { return "report: " + e.err.Error() }
func (e *reportError) Unwrap() error { return e.err }

func badReport(format string, args ...any) error {
	return &reportError{fmt.Errorf(format, args...)}
}

// report is a downloaded report: the JSON itself (entry "") or the entry of a zip
// that holds it, chosen by content. want are the resources the job exported.
type report struct {
	path  string
	entry string
	size  int64 // of the JSON, for progress
	want  []string
}

// openReport finds the report in the file at path: the file itself when it is
// JSON, or the zip entry holding it (the API zips reports of jobs that went
// through zip_in_progress). A zip entry is the report when it is a JSON object
// holding one of the requested resources as an array; entries under __MACOSX/,
// dot-files (._report.json) and anything else (a manifest) are passed over,
// whatever their names. A report holding none of the requested resources is an
// error (*reportError): taking it for an empty one would lose the history.
func openReport(p string, want []string) (*report, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open report: %w", err)
	}
	defer f.Close()
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if !bytes.Equal(magic[:n], []byte("PK\x03\x04")) {
		st, err := f.Stat()
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			return nil, fmt.Errorf("open report: %w", err)
		}
		if !holds(f, want) {
			return nil, badReport("the JSON holds none of the requested resources (%s)", strings.Join(want, ", "))
		}
		return &report{path: p, size: st.Size(), want: want}, nil
	}
	z, err := zip.OpenReader(p)
	if err != nil {
		return nil, badReport("open zip: %w", err)
	}
	defer z.Close()
	var seen []string
	for _, zf := range z.File {
		if skippedEntry(zf) {
			continue
		}
		seen = append(seen, zf.Name)
		rc, err := zf.Open()
		if err != nil {
			continue // a broken entry is not the report; another may be
		}
		ok := holds(rc, want)
		rc.Close()
		if ok {
			return &report{path: p, entry: zf.Name, size: int64(zf.UncompressedSize64), want: want}, nil
		}
	}
	return nil, badReport("no entry of the zip holds the requested resources (%s); entries read: %s",
		strings.Join(want, ", "), strings.Join(seen, ", "))
}

// skippedEntry: directories, macOS resource forks and dot-files are never the
// report.
func skippedEntry(zf *zip.File) bool {
	base := path.Base(zf.Name)
	return zf.FileInfo().IsDir() || strings.HasPrefix(zf.Name, "__MACOSX/") || strings.HasPrefix(base, ".")
}

// open opens the report's JSON for a read from its start.
func (r *report) open() (io.ReadCloser, error) {
	if r.entry == "" {
		f, err := os.Open(r.path)
		if err != nil {
			return nil, fmt.Errorf("open report: %w", err)
		}
		return f, nil
	}
	z, err := zip.OpenReader(r.path)
	if err != nil {
		return nil, badReport("open zip: %w", err)
	}
	i := slices.IndexFunc(z.File, func(f *zip.File) bool { return f.Name == r.entry })
	if i < 0 {
		z.Close()
		return nil, badReport("zip entry %s: gone", r.entry)
	}
	rc, err := z.File[i].Open()
	if err != nil {
		z.Close()
		return nil, badReport("zip entry %s: %w", r.entry, err)
	}
	return zipEntry{rc, z}, nil
}

type zipEntry struct {
	io.ReadCloser
	z *zip.ReadCloser
}

func (e zipEntry) Close() error { return errors.Join(e.ReadCloser.Close(), e.z.Close()) }

// holds reports whether r is a JSON object with one of the resources of want as
// an array (or null: none of them in the range). It reads member names and
// passes over other values (scanner), so a large value costs no memory.
func holds(r io.Reader, want []string) bool {
	sc := newScanner(r)
	found := errors.New("found")
	err := sc.object(func(key string) error {
		if !slices.Contains(want, key) {
			_, err := sc.value(false)
			return err
		}
		c, err := sc.space()
		if err == nil && (c == '[' || c == 'n') {
			return found
		}
		return badReport("%s: not an array", key)
	})
	return err == found
}

// passOf is the pass in which a resource of the report is read: calls, users and
// teams first, metrics second (a metric is announced for a known call only,
// whatever order the report holds them in).
func passOf(resource string) int {
	if resource == callcenter.ExportCallMetrics {
		return 1
	}
	return 0
}

// idKey is the member naming a record of resource: one call metric per call, so
// a metric is the call's.
func idKey(resource string) string {
	if resource == callcenter.ExportCallMetrics {
		return "call_id"
	}
	return "id"
}
