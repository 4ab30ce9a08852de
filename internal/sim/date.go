package sim

import "net/http"

// setDate sets the response's Date header to the simulated present, as a real
// server's Date tells its own clock: a client can follow a world running ahead of
// the wall clock (net/http writes the wall clock only when Date is unset).
func (s *Sim) setDate(h http.Header) {
	h.Set("Date", s.clock.Now().UTC().Format(http.TimeFormat))
}
