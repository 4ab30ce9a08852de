package cursor

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// replyBuf keeps what bytes.Buffer would: every byte written or read, from a
// reader of known length (as io.CopyN hands it) and of unknown length alike,
// however little each Read returns.
func TestReplyBufAsBytesBuffer(t *testing.T) {
	src := strings.Repeat("0123456789", 300)
	for _, c := range []struct {
		name string
		r    func() io.Reader
	}{
		{"limited", func() io.Reader { return io.LimitReader(bufio.NewReader(strings.NewReader(src)), 2000) }},
		{"limited one byte at a time", func() io.Reader { return io.LimitReader(iotest.OneByteReader(strings.NewReader(src)), 1500) }},
		{"unknown length", func() io.Reader { return iotest.HalfReader(strings.NewReader(src)) }},
		{"empty", func() io.Reader { return strings.NewReader("") }},
	} {
		var want bytes.Buffer
		want.WriteString("*2\r\n")
		wn, werr := want.ReadFrom(c.r())
		got := replyBuf{b: make([]byte, 0, 16)}
		_, _ = got.Write([]byte("*2\r\n"))
		gn, gerr := got.ReadFrom(c.r())
		if gn != wn || gerr != werr || !bytes.Equal(got.b, want.Bytes()) {
			t.Errorf("%s: read %d (%v), %d bytes in all; want %d (%v), %d", c.name, gn, gerr, len(got.b), wn, werr, want.Len())
		}
	}
	var got replyBuf
	if _, err := got.ReadFrom(iotest.ErrReader(io.ErrUnexpectedEOF)); err != io.ErrUnexpectedEOF {
		t.Errorf("a failing reader: %v, want %v", err, io.ErrUnexpectedEOF)
	}
}
