package callcenter

import (
	"bytes"
	"io"
	"sync"
)

// Response bodies are read in one allocation of their size when the response
// says it (Content-Length), else into a recycled buffer. A page of 1,000 calls is
// 1 to 2 MB, read once, decoded, and dropped: decoders copy whatever the records
// keep (strings, Raw). io.ReadAll grew a new buffer by doubling for every page
// (about twice the body in garbage, in objects too large for the allocator's
// size classes). A body of known size is not pooled: a buffer kept in a pool is
// live to the collector, and raises the heap it lets grow before collecting
// (GOGC) by as much; one of unknown size would otherwise be grown by doubling.

// maxPooledBody is the largest buffer kept for reuse; a rare larger body (up
// to maxBody) is left to the collector rather than held.
const maxPooledBody = 8 << 20

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// body is a response body read by readBody; release it once nothing refers to
// its bytes any more.
type body struct {
	data   []byte
	pooled *bytes.Buffer // nil: data was allocated for this body
}

// readBody reads up to limit bytes of r; size is the Content-Length, -1 when
// unknown.
func readBody(r io.Reader, size, limit int64) (body, error) {
	if size >= 0 && size < limit {
		// One allocation, of the right size; a body longer than it said is
		// read on (the transport reports a short one as an error).
		buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
		_, err := buf.ReadFrom(io.LimitReader(r, limit))
		return body{data: buf.Bytes()}, err
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(io.LimitReader(r, limit))
	return body{data: buf.Bytes(), pooled: buf}, err
}

// release hands a recycled buffer back for the next response.
func (b body) release() {
	if b.pooled == nil || b.pooled.Cap() > maxPooledBody {
		return
	}
	b.pooled.Reset()
	bodyBuffers.Put(b.pooled)
}
