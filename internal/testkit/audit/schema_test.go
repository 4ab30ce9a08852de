package audit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/schemas"
	"github.com/nats-io/nats.go"
)

func TestValidateSchemas(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	good, err := event.New("acme", events.TeamCreated, "teams/2", "1", at,
		events.TeamData{Team: events.Team{ID: 2, Name: "Sales", Users: []events.UserRef{{ID: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.Data = json.RawMessage(`{"team":{"id":"2","name":"Sales"}}`)
	headers := nats.Header{"Nats-Msg-Id": {good.ID}, "Content-Type": {events.ContentType}, "Callbus-Outbox-Id": {"1700000000000-0"}}
	badHeaders := nats.Header{"Nats-Msg-Id": {good.ID}, "Content-Type": {"application/json"}, "traceparent": {"x"}}
	msgs := []Message{
		{Seq: 1, Event: good, Header: headers},
		{Seq: 2, Event: bad},
		{Seq: 3, DecodeErr: errors.New("boom")},
		{Seq: 4, Event: good, Header: badHeaders},
	}

	got := ValidateSchemas(msgs, v)
	if len(got) != 3 {
		t.Fatalf("got %d problems, want 3:\n%s", len(got), strings.Join(got, "\n"))
	}
	for _, want := range []string{"seq 2: ", bad.ID, "team.created", "/data/team/id", "/data/team: missing properties"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("problem %q should contain %q", got[0], want)
		}
	}
	if !strings.HasPrefix(got[1], "seq 3: ") || !strings.Contains(got[1], "boom") {
		t.Errorf("problem %q should name seq 3 and its decode error", got[1])
	}

	for _, want := range []string{"seq 4: ", "(team.created): headers: ", "/: missing property 'Callbus-Outbox-Id'", "/Content-Type: ", "/traceparent: "} {
		if !strings.Contains(got[2], want) {
			t.Errorf("problem %q should contain %q", got[2], want)
		}
	}

	if got := ValidateSchemas(msgs[:1], v); got != nil {
		t.Fatalf("valid stream: got %v", got)
	}
}

// TestValidateSchemasDataSchema: an event without a dataschema, or whose
// dataschema names no data file of schemas/ (another version, another type), fails.
func TestValidateSchemasDataSchema(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	good, err := event.New("acme", events.TeamCreated, "teams/2", "1", time.Now(), events.TeamData{Team: events.Team{ID: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for name, uri := range map[string]string{
		"none":         "",
		"version":      events.DataSchema(events.TeamCreated, 9),
		"another type": events.DataSchema(events.TeamUpdated, 1),
		"elsewhere":    "https://example.com/team.created.json",
	} {
		e := good
		e.DataSchema = uri
		got := ValidateSchemas([]Message{{Seq: 1, Event: e}}, v)
		if len(got) != 1 || !strings.Contains(got[0], "dataschema") {
			t.Errorf("%s (%q): got %v, want a dataschema problem", name, uri, got)
		}
	}
}

func TestValidateSchemasCapped(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]Message, maxSchemaProblems+7)
	for i := range msgs {
		msgs[i] = Message{Seq: uint64(i + 1), DecodeErr: errors.New("not JSON")}
	}
	got := ValidateSchemas(msgs, v)
	if len(got) != maxSchemaProblems+1 || got[len(got)-1] != "and 7 more messages fail the schemas" {
		t.Fatalf("got %d problems ending %q", len(got), got[len(got)-1])
	}
}
