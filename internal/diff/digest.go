package diff

// The transition of an event is the part of its data that says what changed: the
// status before and after ("previous", "current"), the changed fields with their
// values ("changes"), the members added and removed ("members_added",
// "members_removed"). Events without one (created, joined, ended, deleted,
// finalized) happen once per entity, so their type alone says what they are.
//
// The transition digest is the first digestSize bytes, in hex, of the SHA-256 of
// each part's JSON as it stands in the data (nothing when absent), each followed
// by a zero byte, in that order; "" for an event without a transition. It goes
// into the event id next to the entity's sequence, so that an id never names two
// different transitions even when Redis rolls back and a sequence number is used
// again (DESIGN §3): the same transition derived again keeps its id (JetStream and
// consumers drop the copy), a different one gets a new id (nothing is dropped as a
// duplicate of something else).
//
// Earlier releases computed it by reading the marshalled data back with
// encoding/json; the emitter now takes the parts where it writes them (spans in
// dataenc.go), which gives the same digest (TestDataEncodingAsEncodingJSON checks
// it against v1Digest, that reading). The digest is part of every event id: it
// must never change for the same data.
const digestSize = 6
