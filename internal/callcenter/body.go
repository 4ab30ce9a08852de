package callcenter

import (
	"bytes"
	"io"
	"sync"
)

// Response bodies are read into a recycled buffer: a page of 1,000 calls is 1 to
// 2 MB, read once, decoded, and dropped (decoders copy whatever the records
// keep: strings, Raw), so the next response can reuse its bytes. A body of
// known size (Content-Length) takes the kept buffer when it is at least that
// large, else one of its size: io.ReadAll grew a new buffer by doubling for
// every page (about twice the body in garbage, in objects too large for the
// allocator's size classes), and one allocation per body was still a tenth of
// the poller's allocated bytes on a backlog, each zeroed before it was read into.
//
// One buffer is kept, not a sync.Pool (every collection empties it) nor several:
// a kept buffer is live to the collector and raises the heap it lets grow before
// collecting (GOGC) by as much (a second one raised a backlog's peak RSS by 2 MB
// for no CPU measured), and a poller reads a page, decodes it and releases it
// before it reads the next.
const maxPooledBody = 8 << 20 // a rare larger body, up to maxBody, is not kept

var keptBody struct {
	sync.Mutex
	buf *bytes.Buffer
}

// takeBuffer returns the kept buffer when it holds at least size bytes (any
// size < 0), else a new one of size+bytes.MinRead.
func takeBuffer(size int64) *bytes.Buffer {
	keptBody.Lock()
	defer keptBody.Unlock()
	if b := keptBody.buf; b != nil && (size < 0 || int64(b.Cap()) >= size+bytes.MinRead) {
		keptBody.buf = nil
		b.Reset()
		return b
	}
	return bytes.NewBuffer(make([]byte, 0, max(size, 0)+bytes.MinRead))
}

// body is a response body read by readBody; release it once nothing refers to
// its bytes any more.
type body struct {
	data   []byte
	pooled *bytes.Buffer
}

// readBody reads up to limit bytes of r; size is the Content-Length, -1 when
// unknown. A body longer than it said is read on (the transport reports a
// short one as an error).
func readBody(r io.Reader, size, limit int64) (body, error) {
	if size >= limit {
		size = -1 // read up to the limit, as if unknown, not a buffer of its size
	}
	buf := takeBuffer(size)
	_, err := buf.ReadFrom(io.LimitReader(r, limit))
	return body{data: buf.Bytes(), pooled: buf}, err
}

// release keeps the body's buffer for the next response, unless a larger one is
// kept or it is over maxPooledBody.
func (b body) release() {
	if b.pooled == nil || b.pooled.Cap() > maxPooledBody {
		return
	}
	keptBody.Lock()
	defer keptBody.Unlock()
	if keptBody.buf == nil || keptBody.buf.Cap() < b.pooled.Cap() {
		keptBody.buf = b.pooled
	}
}
