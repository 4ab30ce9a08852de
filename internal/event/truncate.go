package event

// Truncation is what the relay adds to an envelope whose body was larger than the
// NATS server accepts (its max_payload, or the stream's max_msg_size): two
// CloudEvents extension attributes beside the envelope's own. The event keeps its
// id, type, subject and time; in data, lists (never below one element) and long
// strings, at any depth, are cut to a prefix that fits, and the reduced data
// still validates against its type's schema (the order of the cuts: publish.fit).
// Last resort, for data that does not fit even so, data is {} and Truncated is
// "=<bytes of the original data>". A consumer that needs the whole record reads it
// from the API.
type Truncation struct {
	// Truncated names each value cut, comma-separated, as <JSON pointer into
	// data>=<original length>: the number of elements of a list, the bytes of a
	// string. E.g. "/call/participants=2500": data.call.participants holds the
	// first elements of the 2,500 the call had, in their order. The empty pointer
	// names data itself: "=<bytes>" alone is the last-resort form, data {}.
	Truncated string `json:"callbustruncated,omitempty"`
	// OriginalSize is the size in bytes of the body before it was cut.
	OriginalSize int64 `json:"callbusoriginalsize,omitempty"`
}

// Names of the Truncation attributes in the envelope.
const (
	AttrTruncated    = "callbustruncated"
	AttrOriginalSize = "callbusoriginalsize"
)
