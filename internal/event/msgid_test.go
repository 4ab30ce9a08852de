package event

import "testing"

func TestMsgID(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		withdrawn int
		want      string
	}{{0, id}, {1, id + "~r1"}, {12, id + "~r12"}} {
		got := MsgID(id, tc.withdrawn)
		if got != tc.want || MsgIDEvent(got) != id || !IsMsgIDOf(got, id) {
			t.Errorf("MsgID(%d) = %q (event %q), want %q (event %q)", tc.withdrawn, got, MsgIDEvent(got), tc.want, id)
		}
	}
}

func TestIsMsgIDOfRefusesOtherIDs(t *testing.T) {
	for _, m := range []string{"x", "", "abc~r", "abc~r0", "abc~r01", "abc~rx", "abcd~r1", "abc~r1~r2"} {
		if IsMsgIDOf(m, "abc") {
			t.Errorf("IsMsgIDOf(%q, abc) = true", m)
		}
	}
}
