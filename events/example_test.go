package events_test

import (
	"fmt"

	"github.com/callbus/callbus/events"
	"github.com/nats-io/nats.go/jetstream"
)

// A message body as the stream carries it (shortened: the participant has more
// fields).
const sample = `{"specversion":"1.0","id":"4a627eddbb31f06a631e40733787cc03",
"source":"urn:callbus:account:acme","type":"participant.status_changed",
"subject":"calls/1000002/participants/10000002","time":"2026-11-22T00:19:20Z",
"datacontenttype":"application/json","data":{"call_id":1000002,
"participant":{"id":10000002,"participant_id":302696,"participant_type":"Customer","call_status":6},
"previous":{"code":13,"label":"connecting"},"current":{"code":6,"label":"routed to queue"}}}`

// Decode a message body and switch on the event's type. Unknown types are not an
// error: acknowledge them.
func ExampleDecode() {
	ev, err := events.Decode([]byte(sample))
	if err != nil {
		fmt.Println("dead-letter:", err) // wraps events.ErrInvalid
		return
	}
	switch e := ev.(type) {
	case *events.ParticipantStatusChangedEvent:
		fmt.Printf("%s: call %d participant %d %s -> %s\n", e.Account(), e.Data.CallID,
			e.Data.Participant.ID, e.Data.Previous.Label, e.Data.Current.Label)
	case *events.UnknownEvent:
		fmt.Println("ack and skip", e.Type)
	default:
		fmt.Println("not handled:", ev.Metadata().Type)
	}
	// Output: acme: call 1000002 participant 10000002 connecting -> routed to queue
}

// The subject of one type for one account, and of one type for every account.
func ExampleSubject() {
	fmt.Println(events.Subject(events.DefaultPrefix, "acme", events.CallCreated))
	fmt.Println(events.Subject(events.DefaultPrefix, events.Any, events.CallCreated))
	// Output:
	// callcenter.acme.call.created
	// callcenter.*.call.created
}

// The filter subjects of a consumer that applies only the types it handles (set
// them as jetstream.ConsumerConfig.FilterSubjects).
func ExampleFilters() {
	fmt.Println(events.Filters(events.DefaultPrefix, "acme", events.UserStatusChanged, events.CallEnded))
	fmt.Println(events.Filters(events.DefaultPrefix, events.Any))
	// Output:
	// [callcenter.acme.user.status_changed callcenter.acme.call.ended]
	// [callcenter.*.>]
}

// DecodeMsg takes a jetstream.Msg (or a *nats.Msg) as it is. This example needs a
// NATS server, so it is compiled but not run.
func ExampleDecodeMsg() {
	handle := func(m jetstream.Msg) error {
		ev, err := events.DecodeMsg(m)
		if err != nil {
			return m.Term() // not an event of the contract: redelivery cannot help
		}
		fmt.Println("apply", ev.Metadata().ID)
		return m.Ack()
	}
	_ = handle // e.g. consumer.Consume(func(m jetstream.Msg) { _ = handle(m) })
}
