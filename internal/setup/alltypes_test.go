package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/iparams"
)

// newAllTypesHandler serves testdata/all-types.json, which has every type, with
// no further checks at INSTALL.
func newAllTypesHandler(t *testing.T) (*Handler, string) {
	t.Helper()
	data, err := os.ReadFile("testdata/all-types.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := iparams.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/all-types.js")
	if err != nil {
		t.Fatal(err)
	}
	if ps := iparams.CheckScript(d, script); len(ps) > 0 {
		t.Fatal(ps)
	}
	file := filepath.Join(t.TempDir(), "values.json")
	h, err := New(Options{ValuesFile: file, Declarations: d, Script: script,
		Verify: func(context.Context, *iparams.Values) iparams.Problems { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return h, file
}

func TestPageRendersEveryType(t *testing.T) {
	h, _ := newAllTypesHandler(t)
	page := get(t, h, Path).Body.String()
	for _, want := range []string{
		`<input type="text" id="f-t_text" name="t_text" value="">`,
		`<textarea id="f-t_paragraph" name="t_paragraph" rows="4"></textarea>`,
		`<select id="f-t_dropdown" name="t_dropdown"><option value="">(none)</option><option value="one" selected>one</option><option value="two">two</option></select>`,
		`<input type="email" id="f-t_email"`,
		`<input type="text" id="f-t_number" name="t_number" value="" inputmode="numeric" autocomplete="off" min="0" max="10">`,
		`<input type="tel" id="f-t_phone"`,
		`<input type="date" id="f-t_date"`,
		`<input type="url" id="f-t_url"`,
		`<div class="radios" role="radiogroup" aria-labelledby="l-t_radio" id="f-t_radio"><label><input type="radio" name="t_radio" value="red"> red</label><label><input type="radio" name="t_radio" value="green" checked> green</label></div>`,
		`<input type="checkbox" id="f-t_checkbox" name="t_checkbox">`,
		`<div class="checks" role="group" aria-labelledby="l-t_multi" id="f-t_multi"><label title="a"><input type="checkbox" name="t_multi" value="a" checked> A</label><label title="b"><input type="checkbox" name="t_multi" value="b"> B</label><label title="c"><input type="checkbox" name="t_multi" value="c"> C</label></div>`,
		`<span class="domain"><span class="fixed">https://</span><input type="text" id="f-t_domain" name="t_domain" value="" autocapitalize="none" spellcheck="false"><span class="fixed">.example.com</span></span>`,
		`<input type="password" id="f-t_key" name="t_key" value="" autocomplete="new-password">`,
		`<div class="field" data-key="t_hidden" data-type="text" hidden>`,
		`<label class="label" id="l-t_key" for="f-t_key"><span class="text">Key</span><span class="req" title="required"> *</span></label>`,
		`<label class="label" id="l-t_url" for="f-t_url"><span class="text">URL</span><span class="req" title="required" hidden> *</span></label>`,
		`<script src="/custom_configs/iparams.js"></script>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if js := get(t, h, Path+"/iparams.js").Body.String(); !strings.Contains(js, "function onText") {
		t.Error("the page's iparams.js is not the one given")
	}
}
