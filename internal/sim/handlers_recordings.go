package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// pathRecording resolves {call_id} and {recording_id} to the call's recording or
// recording to redact, writing 404 (naming the Call or the Recording) otherwise.
func (rc *reqCtx) pathRecording() (*call, *recording, bool) {
	c, ok := rc.pathCall()
	if !ok {
		return nil, nil, false
	}
	rid, ok := rc.pathID("recording_id", "Recording")
	if !ok {
		return nil, nil, false
	}
	for _, r := range []*recording{c.rec, c.redact} {
		if r != nil && r.id == rid {
			return c, r, true
		}
	}
	rc.notFound("Recording", rid)
	return nil, nil, false
}

// downloadRecording: GET /calls/{call_id}/recording/{recording_id} → 302 with the
// file's URL in Location and an empty body; 404.
func (s *Sim) downloadRecording(rc *reqCtx) {
	_, r, ok := rc.pathRecording()
	if !ok {
		return
	}
	h := rc.rw.Header()
	h.Set("Location", fmt.Sprintf("%s/recordings/%d.mp3", rc.base, r.id))
	h.Set("Content-Length", "0")
	rc.rw.WriteHeader(http.StatusFound)
}

// deleteRecording: DELETE /calls/{call_id}/recording/{recording_id} → 200
// {"status":true}; the recording is gone from the call (updated_time bumps), so a
// second delete is 404. 403 for Supervisor/Agent keys.
func (s *Sim) deleteRecording(rc *reqCtx) {
	if !rc.requireAdmin("Deleting recordings") {
		return
	}
	c, r, ok := rc.pathRecording()
	if !ok {
		return
	}
	w := rc.w
	delete(w.recs, r.id)
	if c.rec == r {
		w.setCallField(c, "recording", func() (any, any) { c.rec = nil; return r.id, nil })
	} else {
		w.setCallField(c, "recording_to_redact", func() (any, any) { c.redact = nil; return r.id, nil })
	}
	rc.send(http.StatusOK, []byte(`{"status":true}`))
}

// serveRecording serves /recordings/{id}.mp3 (a few bytes standing for audio) and
// /recordings/{id}.txt (a transcript), without authentication, as a storage
// bucket's pre-signed URL would; 404 once the recording is deleted.
func (s *Sim) serveRecording(rw http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	name, ext, _ := strings.Cut(file, ".")
	id, err := strconv.ParseInt(name, 10, 64)
	s.mu.Lock()
	w := s.syncLocked()
	c := w.recs[id]
	s.mu.Unlock()
	if err != nil || c == nil || (ext != "mp3" && ext != "txt") {
		http.NotFound(rw, r)
		return
	}
	if ext == "txt" {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(rw, "Transcript of recording %d of call %d.\n", id, c.id)
		return
	}
	rw.Header().Set("Content-Type", "audio/mpeg")
	_, _ = rw.Write(append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), []byte(fmt.Sprintf("sim recording %d", id))...))
}
