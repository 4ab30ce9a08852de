package event

import (
	"strconv"
	"strings"
)

// msgIDRetry separates an event id from the count of withdrawals in a message
// id (MsgID); event ids are hex, so it cannot occur in one.
const msgIDRetry = "~r"

// MsgID is the Nats-Msg-Id under which the relay publishes the event with id
// after it withdrew earlier copies withdrawn times (deleted them from the
// stream because they got ahead of an event the stream had lost): the id itself
// the first time, then id + "~r" + withdrawn. JetStream remembers a deleted
// message's id for its duplicate window and would refuse the event under the
// same one; the CloudEvents id in the body never changes, and that is what
// consumers deduplicate on.
func MsgID(id string, withdrawn int) string {
	if withdrawn <= 0 {
		return id
	}
	return id + msgIDRetry + strconv.Itoa(withdrawn)
}

// MsgIDEvent is the event id of a Nats-Msg-Id made by MsgID.
func MsgIDEvent(msgID string) string {
	id, _, _ := strings.Cut(msgID, msgIDRetry)
	return id
}

// IsMsgIDOf reports whether msgID is a Nats-Msg-Id MsgID makes for the event id.
func IsMsgIDOf(msgID, id string) bool {
	if msgID == id {
		return true
	}
	n, ok := strings.CutPrefix(msgID, id+msgIDRetry)
	k, err := strconv.Atoi(n)
	return ok && err == nil && k > 0 && strconv.Itoa(k) == n
}
