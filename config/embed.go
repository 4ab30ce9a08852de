// Package config declares the poller's configuration once, in iparams.json (the
// installation-parameter format of internal/iparams), and loads it into Settings.
//
// Every parameter is read from, in order of precedence:
//
//  1. the environment variable CALLBUS_<KEY> (the key upper-cased), when not empty;
//  2. the file named by CALLBUS_<KEY>_FILE, its content less one trailing newline
//     (for secrets mounted as files);
//  3. the values file given with --config: a JSON object key → value, as the setup
//     page writes it;
//  4. the declared default_value.
//
// Load validates every value against its declaration and the rules between
// parameters (api_url or api_domain; NATS credentials file or user and password;
// the duplicate window within the retention; …) and reports every problem at once.
// Secure values (api_key, nats_password, redis_password) are secret.Value and are
// masked in errors and log fields. See README.md beside this file.
package config

// values.schema.json and the parameter tables (docs/configuration.md, config/README.md) are rendered from iparams.json.
//go:generate go test -count=1 -run ^(TestReadmeDocsUpToDate|TestValuesSchemaUpToDate)$ -update .

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/callbus/callbus/internal/iparams"
)

// EnvPrefix prefixes every parameter's environment variable.
const EnvPrefix = "CALLBUS_"

//go:embed iparams.json assets
var files embed.FS

// Declarations parses the embedded iparams.json, with EnvPrefix set. Each call
// returns a new, independent value. An error (iparams.Problems) means the embedded
// file is broken, which the package's tests rule out.
func Declarations() (*iparams.Declarations, error) {
	data, err := files.ReadFile("iparams.json")
	if err != nil {
		return nil, fmt.Errorf("read embedded iparams.json: %w", err)
	}
	d, err := iparams.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parse embedded iparams.json: %w", err)
	}
	d.EnvPrefix = EnvPrefix
	return d, nil
}

// Script returns the embedded assets/iparams.js: the setup page's change callbacks.
func Script() []byte {
	data, err := files.ReadFile("assets/iparams.js")
	if err != nil {
		panic("config: assets/iparams.js is not embedded: " + err.Error())
	}
	return data
}

// Assets returns the embedded assets directory (iparams.js).
func Assets() fs.FS {
	sub, err := fs.Sub(files, "assets")
	if err != nil {
		panic("config: assets is not embedded: " + err.Error())
	}
	return sub
}
