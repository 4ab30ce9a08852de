package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

const plain = "sk-live-0123456789abcdef"

func TestNeverPrinted(t *testing.T) {
	v := New(plain)
	type holder struct {
		Key  Value
		Ptr  *Value
		Name string
	}
	h := holder{Key: v, Ptr: &v, Name: "x"}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s"} {
		outs = append(outs, fmt.Sprintf(verb, v), fmt.Sprintf(verb, h))
	}
	j, _ := json.Marshal(h)
	outs = append(outs, string(j), fmt.Errorf("call failed with %v", h).Error(), errors.New(v.String()).Error())
	var buf bytes.Buffer
	lg := zerolog.New(&buf)
	lg.Info().Interface("h", h).Stringer("k", v).Msg("m")
	outs = append(outs, buf.String())
	for _, o := range outs {
		if strings.Contains(o, plain) || strings.Contains(o, fmt.Sprintf("%x", plain)) {
			t.Fatalf("secret leaked in %q", o)
		}
	}
	if !strings.Contains(buf.String(), Redacted) {
		t.Fatalf("zerolog output %q lacks %q", buf.String(), Redacted)
	}
}

func TestUse(t *testing.T) {
	h := http.Header{}
	New(plain).SetHeader(h, "X-Api-Auth")
	if got := h.Get("X-Api-Auth"); got != plain {
		t.Fatalf("header got %q want the plain secret", got)
	}
	if New("").String() != "" || !New("").IsZero() {
		t.Fatalf("empty secret should print empty and be zero")
	}
	if !New("a").Equal(New("a")) || New("a").Equal(New("b")) {
		t.Fatalf("Equal wrong")
	}
}
