package service

import (
	"encoding/json"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/schemas"
	"github.com/rs/zerolog"
)

// recordV2 makes the data of call.created version 2 (testdata/call.created.v2.json:
// the call named record) from version 1's.
func recordV2(data json.RawMessage) (json.RawMessage, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	d["record"] = d["call"]
	delete(d, "call")
	return json.Marshal(d)
}

// v2Contract is the schemas with testdata/call.created.v2.json as
// data/call.created.v2.json beside version 1: the contract of a release that
// breaks call.created.
func v2Contract(t *testing.T) *schemas.Validator {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(schemas.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(schemas.FS(), p)
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/call.created.v2.json")
	if err != nil {
		t.Fatal(err)
	}
	m["data/call.created.v2.json"] = &fstest.MapFile{Data: b}
	v, err := schemas.NewFS(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVersionsSideBySide: a breaking change published as a second version of
// call.created beside the first, with event_versions all, through the whole
// service (simulator, poller, outbox in Redis, relay, JetStream). Version 1's
// stream is what it would be alone (audited against the simulator's truth); each
// call.created has its version 2 right after it in the stream, on
// <prefix>.<account>.call.created.v2, with its own id and a dataschema that
// resolves to data/call.created.v2.json, which validates it.
func TestVersionsSideBySide(t *testing.T) {
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	w := newWorld(t, nil)
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	set := testSettings(w, ns.URL(), rs.URL, "test-1")
	set.EventVersions = string(event.VersionsAll)
	svc := start(t, w, set, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		WithPollOptions(poll.WithVersions(map[events.Type][]event.Version{events.CallCreated: {{N: 2, From: recordV2}}})))
	svc.advance(t, 30) // five simulated minutes
	caughtUp(t, svc.cycles, store)
	svc.stop(t)

	msgs := readStream(t, ns)
	var v1 []audit.Message
	var created, v2 int
	v := v2Contract(t)
	for i, m := range msgs {
		if !strings.HasSuffix(m.Subject, ".v2") {
			v1 = append(v1, m)
			if m.Event.Type == events.CallCreated {
				created++
			}
			continue
		}
		v2++
		prev := msgs[max(i-1, 0)]
		switch {
		case m.Subject != "callcenter.acme.call.created.v2":
			t.Errorf("seq %d: version 2 on %s", m.Seq, m.Subject)
		case i == 0 || prev.Event.Type != events.CallCreated || prev.Event.Subject != m.Event.Subject || prev.Subject != "callcenter.acme.call.created":
			t.Errorf("seq %d: version 2 of %s does not follow its version 1 (seq %d is %s %s)", m.Seq, m.Event.Subject, prev.Seq, prev.Event.Type, prev.Event.Subject)
		case m.Event.ID == prev.Event.ID || m.Header.Get(events.HeaderID) != m.Event.ID:
			t.Errorf("seq %d: version 2's id %s (header %s), version 1's %s", m.Seq, m.Event.ID, m.Header.Get(events.HeaderID), prev.Event.ID)
		case m.Event.DataSchema != events.DataSchema(events.CallCreated, 2) || prev.Event.DataSchema != events.DataSchema(events.CallCreated, 1):
			t.Errorf("seq %d: dataschemas %s after %s", m.Seq, m.Event.DataSchema, prev.Event.DataSchema)
		}
	}
	r := audit.Check(v1, "callcenter")
	r.CompareTruth(w.ReadTruth(t))
	r.Problems = append(r.Problems, audit.ValidateSchemas(msgs, v)...) // version 2 against data/call.created.v2.json
	for _, p := range r.Problems {
		t.Error(p)
	}
	if created == 0 || v2 != created {
		t.Fatalf("%d call.created of version 1, %d of version 2; want as many, at least one", created, v2)
	}
	t.Logf("%d messages: %d call.created, each in versions 1 and 2", len(msgs), created)
}
