package publish

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callbus/callbus/schemas"
)

// updateExamples rewrites schemas/examples/reduced from a real relay run:
// go test ./internal/publish -run TestReducedExamples -update
var updateExamples = flag.Bool("update", false, "rewrite schemas/examples/reduced from a real relay run")

const reducedDir = "../../schemas/examples/reduced"

// TestReducedExamples: schemas/examples/reduced holds what a real relay publishes
// for the call.created example grown to 3,500 participants (1.3 MB) over a
// max_payload of 8 KiB (small, to keep the file small): its participants cut to
// fit (call.created.json); and under 1 KiB, where nothing but the envelope fits,
// in its last-resort form, data {} (call.created.emptied.json). The
// models' decoding test (tools/models) reads them as stream messages of the
// reduced forms. A change to the relay's reduction fails this test until they are
// rewritten with -update.
func TestReducedExamples(t *testing.T) {
	big := bigCall(t, 3500)
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, limit := range map[string]int64{"call.created.json": 8 << 10, "call.created.emptied.json": 1 << 10} {
		b := newBed(t, false)
		b.commitBodies(t, big)
		if err := b.relay(WithMaxPayload(func() int64 { return limit })).Drain(t.Context()); err != nil {
			t.Fatal(err)
		}
		msgs := streamMsgs(t, b.stream)
		if len(msgs) != 1 {
			t.Fatalf("%s: %d messages in the stream, want 1", name, len(msgs))
		}
		var body map[string]any
		if err := json.Unmarshal(msgs[0].Data, &body); err != nil {
			t.Fatal(err)
		}
		mark, _ := body["callbustruncated"].(string)
		if emptied := strings.HasPrefix(mark, "="); mark == "" || emptied != strings.Contains(name, "emptied") {
			t.Fatalf("%s: callbustruncated %q", name, mark)
		}
		if err := v.Validate(msgs[0].Data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Indented like the other examples.
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, msgs[0].Data, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		path := filepath.Join(reducedDir, name)
		if *updateExamples {
			if err := os.MkdirAll(reducedDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want, err := os.ReadFile(path); err != nil || !bytes.Equal(want, pretty.Bytes()) {
			t.Errorf("%s is not what the relay publishes (%v): go test ./internal/publish -run TestReducedExamples -update", path, err)
		}
	}
}
