package callcenter

// Usage is what a caller pacing its own work needs of the rate budget.
type Usage struct {
	// Requests counts the requests admitted so far by the Client's Limiter (every
	// Client sharing that Limiter included); the difference of two readings is
	// what was spent in between.
	Requests uint64
	// Budget is this service's share of the account's limit, in requests per rate
	// window; 0 while no response has reported the limit yet.
	Budget int
}

// Usage returns a snapshot of the Client's rate-budget use. It is safe for
// concurrent use.
func (c *Client) Usage() Usage {
	st := c.lim.Stats()
	u := Usage{Requests: st.Acquired, Budget: st.Budget}
	if st.Limit == 0 {
		u.Budget = 0
	}
	return u
}
