// Package events is the public Go side of callbus's event contract, for consumers
// of the NATS stream: the CloudEvents envelope, the event types of the Catalog with
// one struct per type and its data, Decode to turn a message into a typed event,
// and the subjects to subscribe to.
//
// The JSON schemas in the repository's schemas/ directory describe the same
// contract; a test keeps the Go types and the schemas in step. Unknown event types
// decode to *UnknownEvent rather than failing, so that a consumer keeps working
// when the producer adds a type. The package does no I/O and depends on no NATS
// client.
package events
