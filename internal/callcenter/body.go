package callcenter

import (
	"bytes"
	"io"
	"sync"
)

// Response bodies are read into a recycled buffer: a page of 1,000 calls is 1 to
// 2 MB, read once, decoded, and dropped (decoders copy whatever the records
// keep: strings, Raw), so the next response can reuse its bytes. A body of
// known size (Content-Length) takes a kept buffer at least that large, else one
// of its size: io.ReadAll grew a new buffer by doubling for every page (about
// twice the body in garbage, in objects too large for the allocator's size
// classes), and one allocation per body was still a tenth of the poller's
// allocated bytes on a backlog, each zeroed before it was read into.
//
// The buffers are kept in a short list, not a sync.Pool, which every collection
// empties: maxKeptBodies of at most maxPooledBody each. A kept buffer is live to
// the collector and raises the heap it lets grow before collecting (GOGC) by as
// much, so the list stays short: a poller reads a page, decodes it and releases
// it before it reads the next (the fleet's accounts read small pages).
const (
	maxPooledBody = 8 << 20
	maxKeptBodies = 1
)

var bodyBuffers struct {
	sync.Mutex
	free []*bytes.Buffer
}

// takeBuffer returns a kept buffer of at least size bytes of capacity (size < 0:
// the largest kept), or a new one of size+bytes.MinRead.
func takeBuffer(size int64) *bytes.Buffer {
	bodyBuffers.Lock()
	defer bodyBuffers.Unlock()
	best := -1
	for i, b := range bodyBuffers.free {
		switch {
		case size < 0 && (best < 0 || b.Cap() > bodyBuffers.free[best].Cap()):
			best = i
		case size >= 0 && int64(b.Cap()) >= size+bytes.MinRead && (best < 0 || b.Cap() < bodyBuffers.free[best].Cap()):
			best = i // the smallest that fits
		}
	}
	if best < 0 {
		return bytes.NewBuffer(make([]byte, 0, max(size, 0)+bytes.MinRead))
	}
	b := bodyBuffers.free[best]
	bodyBuffers.free = append(bodyBuffers.free[:best], bodyBuffers.free[best+1:]...)
	b.Reset()
	return b
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

// release keeps the body's buffer for the next response: in place of the
// smallest kept when the list is full, or not at all when it is over
// maxPooledBody (a rare larger body, up to maxBody, is left to the collector).
func (b body) release() {
	if b.pooled == nil || b.pooled.Cap() > maxPooledBody {
		return
	}
	bodyBuffers.Lock()
	defer bodyBuffers.Unlock()
	if len(bodyBuffers.free) < maxKeptBodies {
		bodyBuffers.free = append(bodyBuffers.free, b.pooled)
		return
	}
	small := 0
	for i, k := range bodyBuffers.free {
		if k.Cap() < bodyBuffers.free[small].Cap() {
			small = i
		}
	}
	if bodyBuffers.free[small].Cap() < b.pooled.Cap() {
		bodyBuffers.free[small] = b.pooled
	}
}
