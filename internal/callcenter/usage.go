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
	// Others estimates the requests other integrations of the account made in the
	// last rate window (see LimiterStats.Others): the Limiter leaves the reserve
	// free whoever spends the rest, so this service can spend about Budget −
	// Others.
	Others int
}

// Usage returns a snapshot of the Client's rate-budget use. It is safe for
// concurrent use.
func (c *Client) Usage() Usage {
	st := c.lim.Stats()
	u := Usage{Requests: st.Acquired, Budget: st.Budget, Others: st.Others}
	if st.Limit == 0 {
		u.Budget = 0
	}
	return u
}
