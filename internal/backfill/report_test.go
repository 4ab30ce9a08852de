package backfill

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/secret"
)

// recorder is a sink that keeps the ids it is handed and the positions passed
// over.
type recorder struct {
	got     []string
	skipped []int64
}

func (r *recorder) call(_ int64, c events.Call) error {
	r.got = append(r.got, "c"+itoa(c.ID)+"@"+c.UpdatedTime.Format("15:04"))
	return nil
}
func (r *recorder) metric(_ int64, m events.CallMetric) error {
	r.got = append(r.got, "m"+itoa(m.CallID))
	return nil
}
func (r *recorder) user(_ int64, u events.User) error {
	r.got = append(r.got, "u"+itoa(u.ID))
	return nil
}
func (r *recorder) team(_ int64, t events.Team) error {
	r.got = append(r.got, "t"+itoa(t.ID))
	return nil
}
func (r *recorder) skip(pos int64) { r.skipped = append(r.skipped, pos) }
func (r *recorder) begin(pass int) error {
	r.got = append(r.got, "|"+strconv.Itoa(pass))
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// rejections is an API client whose rejection hook keeps what it is told.
type rejections struct {
	mu  sync.Mutex
	got []callcenter.Rejection
}

func (rj *rejections) client(t *testing.T) *callcenter.Client {
	t.Helper()
	c, err := callcenter.New("http://127.0.0.1:1", secret.New("k"), callcenter.WithRejectionHook(func(r callcenter.Rejection) {
		rj.mu.Lock()
		defer rj.mu.Unlock()
		rj.got = append(rj.got, r)
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// call is a call record of a report, updated at hh:mm.
func call(id int, hhmm, participant string) string {
	return `{"id":` + strconv.Itoa(id) + `,"created_time":"2024-01-01T09:00:00Z","updated_time":"2024-01-01T` + hhmm + `:00Z","participants":[` + participant + `]}`
}

const poison = `{"id":7,"call_status":1,"enqueued_time":"0000-00-00 00:00:00","created_time":"2024-01-01T09:00:00Z","updated_time":"2024-01-01T09:01:00Z"}`

// readAll reads both passes of doc.
func readAll(t *testing.T, pr *passReader, doc string) ([2]*recorder, error) {
	t.Helper()
	var out [2]*recorder
	older, _, err := dupesOf(doc, pr.want)
	if err != nil {
		return out, err
	}
	pr.older = older
	for pass := range out {
		out[pass] = &recorder{}
		if err := pr.read(strings.NewReader(doc), pass, pass, out[pass]); err != nil {
			return out, err
		}
	}
	return out, nil
}

// dupesOf is findDupes of doc, after its index.
func dupesOf(doc string, want []string) (dupes, int, error) {
	idx, err := indexReport(strings.NewReader(doc), want)
	if err != nil {
		return dupes{}, 0, err
	}
	return findDupes(func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(doc)), nil }, want, idx)
}

// TestReadPass: metrics come in the second pass whatever their place in the
// report; unknown keys, resources not requested and null arrays are skipped; a
// report that breaks off is a reportError.
func TestReadPass(t *testing.T) {
	doc := `{"call_metrics":[{"id":9,"call_id":1,"created_time":"2024-01-01T09:00:00Z"}],"extra":{"a":[1,2]},` +
		`"calls":[` + call(1, "09:10", "") + `,` + call(2, "09:10", "") + `],"users":null,"teams":[{"id":3}]}`
	rj := &rejections{}
	pr := &passReader{api: rj.client(t), op: "export job 1 report", want: []string{"calls", "call_metrics", "teams"}}
	got, err := readAll(t, pr, doc)
	if err != nil {
		t.Fatal(err)
	}
	for pass, want := range []string{"c1@09:10 c2@09:10 t3", "m1"} {
		if g := strings.Join(got[pass].got, " "); g != want {
			t.Errorf("pass %d: got %q, want %q", pass, g, want)
		}
	}
	pr.want = []string{"calls"}
	if got, _ := readAll(t, pr, doc); strings.Join(got[0].got, " ") != "c1@09:10 c2@09:10" || len(got[1].got) != 0 {
		t.Errorf("teams and metrics not requested: got %v and %v", got[0].got, got[1].got)
	}
	err = pr.read(strings.NewReader(`{"calls":[`+call(1, "09:10", "")+`,`), 0, 0, &recorder{})
	if re := (*reportError)(nil); !errors.As(err, &re) {
		t.Errorf("a truncated report: %v, want a reportError", err)
	}
}

// TestReportRecordsRejectedAlone: a call whose participant has enqueued_time
// "0000-00-00 00:00:00" is rejected alone, reported to the client's rejection
// hook with its id, field and reason, and the records after it are read.
func TestReportRecordsRejectedAlone(t *testing.T) {
	doc := `{"calls":[` + call(1, "09:10", "") + `,` + call(2, "09:10", poison) + `,` + call(3, "09:10", "") + `]}`
	rj := &rejections{}
	pr := &passReader{api: rj.client(t), op: "export job 4 report", want: []string{"calls"}}
	got, err := readAll(t, pr, doc)
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got[0].got, " "); g != "c1@09:10 c3@09:10" || len(got[0].skipped) != 1 || got[0].skipped[0] != 1 {
		t.Errorf("got %q, passed over %v; want calls 1 and 3, position 1 passed over", g, got[0].skipped)
	}
	if len(rj.got) != 1 {
		t.Fatalf("rejections %+v, want one", rj.got)
	}
	r := rj.got[0]
	if r.Resource != "calls" || r.ID != 2 || r.Field != "participants.enqueued_time" || r.Reason != callcenter.RejectBadTime || r.Source != "export job 4 report" {
		t.Errorf("rejection %+v", r)
	}
}

// TestReportDuplicatesNewestOnce: a call listed twice is read once, from the
// copy with the latest updated_time wherever it stands, and of copies equally
// new, from the last; users without updated_time: the last copy.
func TestReportDuplicatesNewestOnce(t *testing.T) {
	doc := `{"calls":[` + call(1, "09:30", "") + `,` + call(2, "09:10", "") + `,` + call(1, "09:05", "") + `,` +
		call(2, "09:20", "") + `,` + call(3, "09:00", "") + `,` + call(3, "09:00", `{"id":8,"created_time":"2024-01-01T09:00:00Z"}`) +
		`],"users":[{"id":1,"name":"a"},{"id":1,"name":"b"}]}`
	pr := &passReader{api: (&rejections{}).client(t), op: "r", want: []string{"calls", "users"}}
	older, n, err := dupesOf(doc, pr.want)
	if err != nil || n != 4 {
		t.Fatalf("%d older copies (%v), want 4", n, err)
	}
	for _, pos := range []int64{2, 1, 4, 6} {
		if !older.has(0, pos) {
			t.Errorf("position %d not passed over", pos)
		}
	}
	got, err := readAll(t, pr, doc)
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got[0].got, " "); g != "c1@09:30 c2@09:20 c3@09:00 u1" {
		t.Errorf("got %q", g)
	}
}

// writeZip writes a zip of the given entries, in order.
func writeZip(t *testing.T, entries ...[2]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "report.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for _, e := range entries {
		w, err := z.Create(e[0])
		if err == nil {
			_, err = w.Write([]byte(e[1]))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReportEntryByContent: the report is the entry holding the requested
// resources, past resource forks, dot-files and manifests; a zip or JSON with
// none of them fails with a reportError naming what it read.
func TestReportEntryByContent(t *testing.T) {
	report := `{"calls":[` + call(1, "09:10", "") + `]}`
	p := writeZip(t, [2]string{"manifest.json", `{"files":["export.json"],"calls":2}`},
		[2]string{"__MACOSX/._export.json", "\x00\x05\x16\x07binary"}, [2]string{".hidden.json", report},
		[2]string{"notes.txt", "hello"}, [2]string{"data/export.json", report})
	rep, err := openReport(p, []string{"calls"})
	if err != nil || rep.entry != "data/export.json" {
		t.Fatalf("entry %v (%v), want data/export.json", rep, err)
	}
	rc, err := rep.open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	r := &recorder{}
	if err := (&passReader{api: (&rejections{}).client(t), want: rep.want}).read(rc, 0, 0, r); err != nil || len(r.got) != 1 {
		t.Errorf("read %v (%v)", r.got, err)
	}
	for name, path := range map[string]string{
		"zip without the report": writeZip(t, [2]string{"manifest.json", `{"files":[]}`}, [2]string{"__MACOSX/._report.json", report}),
		"JSON without calls":     writeFile(t, `{"users":[{"id":1}]}`),
	} {
		_, err := openReport(path, []string{"calls"})
		if re := (*reportError)(nil); !errors.As(err, &re) || !strings.Contains(err.Error(), "calls") {
			t.Errorf("%s: %v, want a reportError naming calls", name, err)
		}
	}
}

func writeFile(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
