package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/callbus/callbus/internal/iparams"
)

// field is one parameter as the template renders it.
type field struct {
	Key, Label, Hint string
	Type             string // the iparam type
	Kind             string // how it is rendered: input, textarea, select, multiselect, radio, checkbox, domain
	InputType        string // the <input type> for kinds input and domain
	Numeric          bool   // a number: a text input, so that what the user typed reaches the checks
	Group            string // the id of its section (groups.go)
	Required         bool
	Visible          bool
	Secure           bool
	SecureSet        bool // a saved secure value exists; it is never sent
	Value            string
	Checked          bool
	Options          []option
	Min, Max         string // "" when unbounded
	Prefix, Suffix   string // fixed parts around a domain's account name
}

type option struct {
	Value    string
	Label    string // what a multiselect's checkbox shows: the value made readable
	Selected bool
}

// pageState is what setup.js needs besides the form: the rules to check and the
// callbacks to run.
type pageState struct {
	InstallURL string       `json:"installURL"`
	CheckURL   string       `json:"checkURL"`
	Params     []paramState `json:"params"`
}

type paramState struct {
	Key       string      `json:"key"`
	Type      string      `json:"type"`
	Required  bool        `json:"required"`
	Secure    bool        `json:"secure"`
	SecureSet bool        `json:"secureSet"`
	Min       *int64      `json:"min"`
	Max       *int64      `json:"max"`
	Change    string      `json:"change,omitempty"`
	Regex     []ruleState `json:"regex"`
}

type ruleState struct {
	Pattern string `json:"pattern"`
	Message string `json:"message"`
}

type pageData struct {
	Title      string
	Base       string
	ValuesFile string
	Notice     string
	Sections   []section
	State      pageState
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	saved, notice := h.savedValues()
	data := pageData{Title: "callbus installation parameters", Base: Path, ValuesFile: h.opts.ValuesFile,
		Notice: notice, State: pageState{InstallURL: Path + "/install", CheckURL: Path + "/check"}}
	var fields []field
	for _, p := range h.decl.Params() {
		f := newField(p, saved)
		fields = append(fields, f)
		data.State.Params = append(data.State.Params, newParamState(p, f.SecureSet))
	}
	data.Sections = sections(fields)
	var b bytes.Buffer
	if err := h.page.Execute(&b, data); err != nil {
		h.opts.Logger.Error().Err(err).Msg("render setup page")
		http.Error(w, "render page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

// savedValues reads the values file: what passes validation prefills the form,
// defaults fill the rest. A file that cannot be read or has problems gives a
// notice for the page.
func (h *Handler) savedValues() (*iparams.Values, string) {
	raw, err := readRaw(h.opts.ValuesFile)
	notice := ""
	if err != nil {
		notice = fmt.Sprintf("The saved values could not be read (%v); the form shows the defaults.", err)
	}
	v, ps := h.decl.ValidatePartial(raw)
	if raw != nil && len(ps) > 0 {
		notice = fmt.Sprintf("The saved values have problems, shown as defaults or empty fields: %v", ps)
	}
	return v, notice
}

// readRaw reads the values file; a missing file is nil and no error.
func readRaw(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return iparams.DecodeValues(data)
}

func newField(p iparams.Param, saved *iparams.Values) field {
	f := field{Key: p.Key, Label: p.DisplayName, Hint: p.Description, Type: string(p.Type),
		Required: p.Required, Visible: p.Visible, Secure: p.Secure, Kind: "input", InputType: "text", Group: groupOf(p)}
	if p.Secure {
		f.SecureSet = saved.IsSet(p.Key)
		f.InputType = "password"
		if p.Type == iparams.Paragraph {
			f.Kind = "textarea"
		}
		return f // the value is never rendered
	}
	val, _ := saved.Get(p.Key)
	switch v := val.(type) {
	case string:
		f.Value = v
	case int64:
		f.Value = strconv.FormatInt(v, 10)
	case bool:
		f.Checked = v
	}
	selected, _ := val.([]string)
	for _, o := range p.Options {
		f.Options = append(f.Options, option{Value: o, Label: readable(o), Selected: o == f.Value || slices.Contains(selected, o)})
	}
	switch p.Type {
	case iparams.Paragraph:
		f.Kind = "textarea"
	case iparams.Dropdown:
		f.Kind = "select"
	case iparams.Multiselect:
		f.Kind = "multiselect"
	case iparams.Radio:
		f.Kind = "radio"
	case iparams.Checkbox:
		f.Kind = "checkbox"
	case iparams.Domain:
		f.Kind, f.Prefix, f.Suffix = "domain", "https://", "."+p.DomainSuffix
	case iparams.Email:
		f.InputType = "email"
	case iparams.Number:
		// Not type=number: a browser shows "eighty" in one but gives the page "",
		// which would send nothing and so save the default in place of what was typed.
		f.Numeric = true
		f.Min, f.Max = bound(p.Min), bound(p.Max)
	case iparams.PhoneNumber:
		f.InputType = "tel"
	case iparams.Date:
		f.InputType = "date"
	case iparams.URL:
		f.InputType = "url"
	}
	return f
}

// readable turns an option id such as "call_metrics" into "Call metrics".
func readable(id string) string {
	s := strings.ReplaceAll(id, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func bound(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

func newParamState(p iparams.Param, secureSet bool) paramState {
	s := paramState{Key: p.Key, Type: string(p.Type), Required: p.Required, Secure: p.Secure,
		SecureSet: secureSet, Min: p.Min, Max: p.Max, Change: p.Change, Regex: []ruleState{}}
	for _, r := range p.Regex {
		s.Regex = append(s.Regex, ruleState{Pattern: r.Pattern.String(), Message: r.Message})
	}
	return s
}
