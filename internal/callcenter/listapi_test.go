package callcenter

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// listAPI is a fake /calls and /call_metrics holding n records created step apart
// from w0 (record i has id i+1), listed in a chosen order, to test the readers of
// since.go in every order an API may use. It is safe for concurrent use.
type listAPI struct {
	n     int
	step  time.Duration
	order string // "newest", "oldest", "random" or "custom" (by perm)
	perm  []int  // custom order: the records' indexes in list order
	// shuffles is how many requests get a fresh random order (then it stays); -1:
	// every request.
	shuffles int
	// dup repeats, at the top of every page after the first, the last record of
	// the page before (a list moving under the reader).
	dup          bool
	noMeta       bool
	ignoreByTime bool // /calls ignores by_time
	inclusiveTo  bool // by_time[to] includes a record created exactly at it
	// reversed is the request whose page comes in reverse (an order that breaks
	// midway); 0: none.
	reversed int
	// poison holds ids served with an impossible participant enqueued_time.
	poison map[int64]bool
	// undated holds ids served with a null created_time.
	undated map[int64]bool

	mu       sync.Mutex
	rnd      *rand.Rand
	rank     []int // random order: records sorted by rank
	requests int
	byTime   int               // requests that carried by_time
	served   map[int64]float64 // id → updated_time (seconds after w0) of the copy served last
}

func newListAPI(n int, order string) *listAPI {
	return &listAPI{n: n, step: time.Minute, order: order, rnd: rand.New(rand.NewPCG(7, 9)), served: map[int64]float64{}}
}

func (a *listAPI) at(i int) time.Time { return w0.Add(time.Duration(i) * a.step) }

func (a *listAPI) handle(_ int, w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests++
	q := r.URL.Query()
	metrics := strings.HasSuffix(r.URL.Path, "/call_metrics")
	in := a.window(q, metrics)
	a.arrange(in)
	per, _ := strconv.Atoi(q.Get("per_page"))
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	lo := (page - 1) * per
	var items []int
	if lo < len(in) {
		items = in[lo:min(lo+per, len(in))]
	}
	if a.dup && page > 1 && lo-1 < len(in) {
		items = append([]int{in[lo-1]}, items...)
	}
	if a.requests == a.reversed {
		items = slices.Clone(items)
		slices.Reverse(items)
	}
	var b strings.Builder
	b.WriteString(map[bool]string{false: `{"calls":[`, true: `{"call_metrics":[`}[metrics])
	for k, i := range items {
		if k > 0 {
			b.WriteByte(',')
		}
		upd := w0.Add(time.Duration(a.requests) * time.Second)
		a.served[int64(i+1)] = upd.Sub(w0).Seconds()
		created := strconv.Quote(a.at(i).Format(time.RFC3339))
		if a.undated[int64(i+1)] {
			created = "null"
		}
		fmt.Fprintf(&b, `{"id":%d,"call_id":%d,"created_time":%s,"updated_time":%q`, i+1, i+1, created, upd.Format(time.RFC3339))
		if a.poison[int64(i+1)] {
			b.WriteString(`,"participants":[{"id":1,"enqueued_time":"0000-00-00 00:00:00"}]`)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	if !a.noMeta {
		fmt.Fprintf(&b, `,"meta":{"total_count":%d,"total_pages":%d,"current":%d}`, len(in), (len(in)+per-1)/per, page)
	}
	b.WriteByte('}')
	reply(w, http.StatusOK, b.String())
}

// window returns the indexes of the records within by_time, oldest first.
func (a *listAPI) window(q map[string][]string, metrics bool) []int {
	from, to := time.Time{}, w0.Add(100*365*24*time.Hour)
	if f := first(q["by_time[from]"]); f != "" {
		a.byTime++
		if metrics || !a.ignoreByTime {
			from, _ = time.Parse(time.RFC3339, f)
			to, _ = time.Parse(time.RFC3339, first(q["by_time[to]"]))
		}
	}
	var in []int
	for i := range a.n {
		if !a.at(i).Before(from) && (a.at(i).Before(to) || a.inclusiveTo && a.at(i).Equal(to)) {
			in = append(in, i)
		}
	}
	return in
}

// arrange puts in (oldest first) in the list's order.
func (a *listAPI) arrange(in []int) {
	switch a.order {
	case "newest":
		slices.Reverse(in)
	case "custom":
		pos := make(map[int]int, len(a.perm))
		for p, i := range a.perm {
			pos[i] = p
		}
		slices.SortFunc(in, func(x, y int) int { return pos[x] - pos[y] })
	case "random":
		if a.rank == nil || a.shuffles != 0 {
			a.rank = a.rnd.Perm(a.n)
			if a.shuffles > 0 {
				a.shuffles--
			}
		}
		slices.SortFunc(in, func(x, y int) int { return a.rank[x] - a.rank[y] })
	}
}

func (a *listAPI) stats() (requests, byTime int, served map[int64]float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests, a.byTime, maps.Clone(a.served)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
