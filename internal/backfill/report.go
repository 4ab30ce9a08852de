package backfill

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/callbus/callbus/internal/callcenter"
)

// openReport opens a downloaded report for reading: the JSON itself, or the
// first .json file of a zip (the API zips reports of jobs that went through
// zip_in_progress). size is the JSON's length, for progress.
func openReport(path string) (r io.ReadCloser, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("open report: %w", err)
	}
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if !bytes.Equal(magic[:n], []byte("PK\x03\x04")) {
		st, err := f.Stat()
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("open report: %w", err)
		}
		return f, st.Size(), nil
	}
	f.Close()
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, 0, fmt.Errorf("open zipped report: %w", err)
	}
	for _, zf := range z.File {
		if strings.HasSuffix(zf.Name, ".json") {
			rc, err := zf.Open()
			if err != nil {
				z.Close()
				return nil, 0, fmt.Errorf("open zipped report %s: %w", zf.Name, err)
			}
			return zipEntry{rc, z}, int64(zf.UncompressedSize64), nil
		}
	}
	z.Close()
	return nil, 0, errors.New("open zipped report: no .json file in it")
}

type zipEntry struct {
	io.ReadCloser
	z *zip.ReadCloser
}

func (e zipEntry) Close() error { return errors.Join(e.ReadCloser.Close(), e.z.Close()) }

// passOf is the pass in which a resource of the report is read: calls, users and
// teams first, metrics second (a metric is announced for a known call only,
// whatever order the report holds them in).
func passOf(resource string) int {
	if resource == callcenter.ExportCallMetrics {
		return 1
	}
	return 0
}

// sink receives the records of one pass, one at a time, with their position in
// the pass (counted over the pass's resources, in report order).
type sink interface {
	call(pos int64, c callcenter.Call) error
	metric(pos int64, m callcenter.CallMetric) error
	user(pos int64, u callcenter.User) error
	team(pos int64, t callcenter.Team) error
}

// readPass streams the report's records of pass to s: one record in memory at a
// time, whatever the report's size. Resources of the other pass are skipped
// element by element; unknown keys are skipped whole.
func readPass(r io.Reader, pass int, s sink) error {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	var pos int64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		key, _ := tok.(string)
		if !isResource(key) {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("report %s: %w", key, err)
			}
			continue
		}
		var each func() error
		switch {
		case passOf(key) != pass:
			each = func() error { var raw json.RawMessage; return dec.Decode(&raw) }
		case key == callcenter.ExportCalls:
			each = record(dec, &pos, s.call)
		case key == callcenter.ExportCallMetrics:
			each = record(dec, &pos, s.metric)
		case key == callcenter.ExportUsers:
			each = record(dec, &pos, s.user)
		default:
			each = record(dec, &pos, s.team)
		}
		if err := eachElement(dec, each); err != nil {
			return fmt.Errorf("report %s: %w", key, err)
		}
	}
	return nil
}

func isResource(key string) bool {
	for _, r := range Resources {
		if r == key {
			return true
		}
	}
	return false
}

// record decodes the next element as a T and hands it on with its position.
func record[T any](dec *json.Decoder, pos *int64, fn func(int64, T) error) func() error {
	return func() error {
		var v T
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*pos++
		return fn(*pos-1, v)
	}
}

// eachElement calls each for every element of the array that comes next (null
// counts as empty).
func eachElement(dec *json.Decoder, each func() error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("want an array, got %v", tok)
	}
	for dec.More() {
		if err := each(); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("report: want %q, got %v", d, tok)
	}
	return nil
}
