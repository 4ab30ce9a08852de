package cursor

import (
	"errors"
	"io"
	"slices"
)

// replyBuf collects a raw reply as go-redis writes it out (readXRange). go-redis
// copies each string of the reply with io.CopyN, which hands ReadFrom a reader
// of exactly the string's length (and its CRLF): replyBuf makes room for all of
// it at once and reads until the reader is done, where bytes.Buffer makes room
// for 512 bytes at a time and reads once more to see io.EOF. An outbox entry has
// a dozen strings, most of them a few bytes long, so that per-string work counts.
type replyBuf struct{ b []byte }

// Write appends p.
func (w *replyBuf) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// ReadFrom appends what r has until io.EOF, as bytes.Buffer does.
func (w *replyBuf) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		want := 512 // a reader of unknown length: a chunk at a time
		if l, ok := r.(*io.LimitedReader); ok {
			if l.N <= 0 {
				return total, nil
			}
			want = int(l.N)
		}
		w.b = slices.Grow(w.b, want)
		n, err := r.Read(w.b[len(w.b):cap(w.b)])
		if n < 0 {
			return total, errors.New("reply buffer: negative read count")
		}
		w.b = w.b[:len(w.b)+n]
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}
