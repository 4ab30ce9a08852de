package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/callbus/callbus/internal/iparams"
)

// Load reads every parameter from the environment (through getenv, e.g.
// os.Getenv), the CALLBUS_<KEY>_FILE files and the values file configFile ("" for
// none), in that order of precedence over the declared defaults; validates them; and
// derives Settings. With accounts_dir set (a fleet), the settings each account
// file gives (account, api_key, api_url or api_domain) are not required of the
// process. It also checks that the NATS credentials and CA files it names
// can be read. On failure the error lists every problem (iparams.Problems inside,
// by parameter key; IsInvalid reports it), its text naming each setting as the
// user gave it or can give it (CALLBUS_API_KEY, CALLBUS_API_KEY_FILE, or the key
// in the values file), and never contains a secure value.
func Load(getenv func(string) string, configFile string) (Settings, error) {
	d, err := Declarations()
	if err != nil {
		return Settings{}, fmt.Errorf("load config: %w", err)
	}
	src := sources{d: d, file: configFile, from: map[string]string{}}
	raw, ps := gather(d, getenv, &src)
	v, bad := d.ValidatePartial(raw)
	fleet := v.IsSet("accounts_dir")
	if fleet {
		bad = withoutPerAccountRequired(bad)
	}
	ps = append(ps, bad...)
	s, derived := fromValues(v, src.name, fleet)
	if len(derived) > 0 {
		ps = ps.Merge(derived)
	} else {
		ps = append(ps, checkFiles(s)...)
	}
	if len(ps) > 0 {
		return Settings{}, &loadError{ps: ps, src: src}
	}
	return s, nil
}

// gather collects the raw value of every declared key by precedence: the
// environment variable when not empty, else the content of the file its _FILE
// variable names (less one trailing newline), else the values file's entry. Keys
// the values file has but d does not declare are passed on, for Validate to
// report. Unreadable files are problems; the other sources still count. It
// records in src where each value came from.
func gather(d *iparams.Declarations, getenv func(string) string, src *sources) (map[string]any, iparams.Problems) {
	var ps iparams.Problems
	raw := make(map[string]any)
	if src.file != "" {
		fileValues, err := readValuesFile(src.file)
		if err != nil {
			ps = append(ps, iparams.Problem{Key: "--config", Message: err.Error()})
		}
		for k, v := range fileValues {
			raw[k] = v
			src.from[k] = fromFile
		}
	}
	for _, key := range d.Keys() {
		name := d.EnvVar(key)
		if v := getenv(name); v != "" {
			raw[key] = v
			src.from[key] = name
			continue
		}
		path := getenv(name + "_FILE")
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			ps = append(ps, iparams.Problem{Key: key, Message: fmt.Sprintf("read %s_FILE: %v", name, err)})
			continue
		}
		raw[key] = trimNewline(string(data))
		src.from[key] = name + "_FILE"
	}
	return raw, ps
}

func readValuesFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read values file: %w", err)
	}
	values, err := iparams.DecodeValues(data)
	if err != nil {
		return nil, fmt.Errorf("values file %s: %w", path, err)
	}
	return values, nil
}

// trimNewline drops one trailing newline ("\n" or "\r\n"), as editors and
// `echo` add one to a mounted secret.
func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// checkFiles checks that the files the settings name can be read now, rather than
// at the first reconnect.
func checkFiles(s Settings) iparams.Problems {
	var ps iparams.Problems
	for _, f := range []struct{ key, path string }{{"nats_creds", s.NATSCreds}, {"nats_tls_ca", s.NATSTLSCA}} {
		if f.path == "" {
			continue
		}
		if fh, err := os.Open(f.path); err != nil {
			ps = append(ps, iparams.Problem{Key: f.key, Message: fmt.Sprintf("cannot read the file: %v", err)})
		} else {
			fh.Close()
		}
	}
	return ps
}
