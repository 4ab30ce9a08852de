package setup

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/iparams"
	"github.com/chromedp/chromedp"
)

// Every utils.set attribute, utils.get, the errors utils raises, a checkbox
// callback and INSTALL of every type, in a real browser.
func TestEveryTypeInBrowser(t *testing.T) {
	b := newBrowser(t)
	h, file := newAllTypesHandler(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	b.do("open the page", chromedp.Navigate(srv.URL+Path))
	b.waitFor("page ready", `document.documentElement.dataset.ready === "true"`)

	// utils raises the errors of the spec.
	for expr, want := range map[string]string{
		`utils.get("nope")`:                          `no installation parameter matches the key "nope"`,
		`utils.set("nope", {visible: true})`:         `no installation parameter matches the key "nope"`,
		`utils.set("t_number", {min: "2"})`:          "min must be a number",
		`utils.set("t_text", {values: ["x"]})`:       "values must be set on a radio, dropdown or multiselect only",
		`utils.set("t_text", {color: "red"})`:        "unknown attribute color",
		`utils.set("t_multi", {value: "a"})`:         "value must be an array of strings",
		`utils.set("t_checkbox", {value: "true"})`:   "value must be a boolean",
		`utils.set("t_text", {visible: "yes"})`:      "visible must be a boolean",
		`utils.set("t_text", {max: 3})`:              "max must be set on a number only",
		`utils.set("t_dropdown", {values: [1, 2]})`:  "values must be an array of strings",
		`utils.set("t_paragraph", {label: 5})`:       "label must be a string",
		`utils.set("t_paragraph", {hint: null})`:     "hint must be a string",
		`utils.set("t_paragraph", {required: 1})`:    "required must be a boolean",
		`utils.set("t_paragraph", {disabled: "no"})`: "disabled must be a boolean",
	} {
		got := b.eval(`(function () { try { ` + expr + `; return "no error"; } catch (e) { return e.message; } })()`)
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", expr, got, want)
		}
	}
	if got := b.eval(`(function () { var el = document.getElementById("f-t_key"); el.value = "typed"; var got = utils.get("t_key"); el.value = ""; return got; })()`); got != "" {
		t.Errorf("utils.get of a secure field gave %q", got)
	}

	// The text callback sets every attribute on other fields.
	b.typeInto("t_text", "go")
	checks := map[string]string{
		`document.querySelector("#l-t_paragraph .text").textContent`:                                  "Paragraph for go",
		`document.getElementById("h-t_paragraph").textContent`:                                        "hint for go",
		`document.getElementById("f-t_number").min + "-" + document.getElementById("f-t_number").max`: "2-4",
		`Array.from(document.getElementById("f-t_dropdown").options).map(o => o.value).join()`:        ",two",
		`document.getElementById("f-t_dropdown").value`:                                               "two",
		`document.querySelector("#f-t_radio input:checked").value`:                                    "red",
		`document.querySelectorAll("#f-t_radio input").length`:                                        "1",
		checkedIn("t_multi"):                              "b,c",
		`document.getElementById("f-t_checkbox").checked`: "true",
		hidden("t_hidden"):                                "false",
		`document.querySelector('.field[data-key="t_hidden"] .req').hidden`: "false",
		`document.getElementById("f-t_hidden").value`:                       "shown",
		`document.getElementById("f-t_email").disabled`:                     "true",
	}
	for expr, want := range checks {
		b.waitFor(expr, expr+` + "" === "`+want+`"`)
	}

	// A callback's error clears the value: the text, and the checkbox.
	b.typeInto("t_text", "bad")
	b.waitFor("text refused", errorOf("t_text")+` === "text is bad" && document.getElementById("f-t_text").value === ""`)
	b.do("uncheck", chromedp.Click(chromedp.ID("f-t_checkbox")))
	b.waitFor("checkbox refused", errorOf("t_checkbox")+` === "must stay checked"`)
	b.do("check", chromedp.Click(chromedp.ID("f-t_checkbox")))
	b.waitFor("checkbox accepted", errorOf("t_checkbox")+` === ""`)

	// The page enforces the bounds utils.set gave (the declaration allows 0 to 10).
	b.typeInto("t_text", "ok")
	b.typeInto("t_number", "5")
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("runtime max", errorOf("t_number")+` === "must be at most 4"`)
	b.waitFor("key required", errorOf("t_key")+` === "required"`)

	// The server's own checks, for what the page leaves to it.
	b.typeInto("t_number", "3")
	b.typeInto("t_key", "k-1")
	b.typeInto("t_phone", "12")
	b.typeInto("t_url", "example.com")
	b.change("t_date", `el.value = "2024-02-29"`)
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("server phone check", errorOf("t_phone")+`.includes("phone number")`)
	b.waitFor("server url check", errorOf("t_url")+`.includes("absolute URL")`)
	b.screenshot("alltypes")

	b.typeInto("t_phone", "+44 20 7946 0958")
	b.typeInto("t_url", "https://example.com/hook")
	b.typeInto("t_domain", "acme")
	b.typeInto("t_paragraph", "line one")
	b.do("click INSTALL", chromedp.Click(chromedp.ID("install")))
	b.waitFor("saved", `document.getElementById("result").textContent.includes("Saved to")`)

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := iparams.DecodeValues(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"t_text": "ok", "t_paragraph": "line one", "t_dropdown": "two", "t_number": json.Number("3"),
		"t_phone": "+44 20 7946 0958", "t_date": "2024-02-29", "t_url": "https://example.com/hook",
		"t_radio": "red", "t_checkbox": true, "t_multi": []any{"b", "c"}, "t_domain": "acme", "t_key": "k-1",
		"t_hidden": "shown",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("saved %s\nwant %v (t_email disabled, so not sent)", data, want)
	}
}
