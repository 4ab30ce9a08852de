// Package events is the public Go side of callbus's event contract, for consumers
// of the NATS stream: the CloudEvents envelope, the event types of the Catalog with
// one struct per type and its data, Decode to turn a message into a typed event,
// and the subjects to subscribe to.
//
// The data embeds the records of the call-center API (Call, Participant, User,
// Team, CallMetric …) as callbus normalised them: UTC times, lower-case direction,
// numbers as numbers. They are defined here, once: callbus's API client returns
// the same types. Each decodes tolerantly, as from the API (a number sent as a
// string, "" for null), and encodes to the JSON of the events.
//
// Order. One entity's events (one Subject) are stored in the stream in the order
// callbus observed the changes; that order is the contract. Order them by stream
// sequence, never by Meta.Time. Time is when the record dates the change:
// call.created the call's created_time, call.updated its updated_time, call.ended
// the last terminal updated_time of its participants (the end, often earlier than
// the call.updated published just before it: a recording attached after the end),
// participant events the participant's updated_time, metric events the metric's
// updated_time, and user and team events, which carry no update time, when callbus
// observed the change. It is not monotonic per entity: a consumer that supersedes
// by time drops a call's end.
//
// The JSON schemas in the repository's schemas/ directory describe the same
// contract; a test keeps the Go types and the schemas in step. Unknown event types
// decode to *UnknownEvent rather than failing, so that a consumer keeps working
// when the producer adds a type. The package does no I/O and depends on no NATS
// client.
package events
