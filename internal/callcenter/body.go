package callcenter

import (
	"bytes"
	"io"
	"sync"
)

// Response bodies are read into recycled buffers. A page of 1,000 calls is 1 to
// 2 MB, read once, decoded, and dropped: decoders copy whatever the records keep
// (strings, Raw), so the bytes are free again as soon as the page is decoded.
// io.ReadAll would instead grow a new buffer by doubling for every page (about
// twice the body in garbage, in objects too large for the allocator's size
// classes), which raised the poller's peak heap during a backlog.

// maxPooledBody is the largest buffer kept for reuse; a rare larger body (up
// to maxBody) is left to the collector rather than held.
const maxPooledBody = 8 << 20

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads up to limit bytes of r (size: the Content-Length, -1 when
// unknown) into a recycled buffer. The caller hands the buffer back with
// releaseBody once nothing refers to its bytes any more.
func readBody(r io.Reader, size, limit int64) (*bytes.Buffer, error) {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	if size >= 0 && size <= limit {
		// One allocation at most, of the right size: ReadFrom wants MinRead
		// bytes free before it reads.
		buf.Grow(int(size) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(io.LimitReader(r, limit))
	return buf, err
}

// releaseBody hands buf back for the next response.
func releaseBody(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBody {
		return
	}
	buf.Reset()
	bodyBuffers.Put(buf)
}
