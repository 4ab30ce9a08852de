package callcenter

import (
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/sim"
)

// The client's reading of terminal statuses agrees with the simulator's own,
// independent one, for every status the spec lists and a few it does not.
func TestCallStatusTerminalAgreesWithSimulator(t *testing.T) {
	for status := -1; status <= 21; status++ {
		if got, want := events.CallStatusTerminal(status), sim.Terminal(status); got != want {
			t.Errorf("CallStatusTerminal(%d) = %v, simulator says %v (%s)", status, got, want, events.CallStatusLabel(status))
		}
	}
}
