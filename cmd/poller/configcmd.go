package main

import (
	"fmt"
	"io"
	"os"

	"github.com/callbus/callbus/config"
)

const configUsage = `usage: poller config validate|docs|schema [flags]

  validate [--config FILE]  check the configuration as ` + "`poller run`" + ` would read it:
                            every required setting and every value, from the
                            CALLBUS_* variables and FILE (exit 2 when invalid)
  docs                      print the configuration table (Markdown)
  schema                    print the JSON Schema of the configuration (Helm values)
`

// runConfig is `poller config validate|docs|schema`.
func runConfig(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || wantsHelp(args[:1]) {
		fs := newFlags("config", configUsage, stderr)
		if len(args) > 0 {
			return parseFlags(fs, args, stdout)
		}
		fs.Usage()
		return exitCode{2, fmt.Errorf("config: want validate, docs or schema")}
	}
	switch args[0] {
	case "validate":
		return runValidate(args[1:], getenv, stdout, stderr)
	case "docs", "schema":
		fs := newFlags("config "+args[0], configUsage, stderr)
		if err := parseFlags(fs, args[1:], stdout); err != nil {
			return err
		}
		if args[0] == "docs" {
			doc, err := config.Docs()
			if err != nil {
				return err
			}
			_, err = io.WriteString(stdout, doc)
			return err
		}
		b, err := config.Schema()
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	return exitCode{2, fmt.Errorf("config %q: want validate, docs or schema (see `poller config --help`)", args[0])}
}

// runValidate is `poller config validate`: the declaration, then the values as
// `poller run` would load them, required settings included.
func runValidate(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("config validate", "usage: poller config validate [--config FILE] [--json]\n\n"+
		"Checks the configuration as `poller run` reads it (CALLBUS_* variables, then FILE,\n"+
		"then the defaults): every required setting and every value. Exit status 2 when\n"+
		"invalid, with every problem named by the variable (or file entry) to fix.\n", stderr)
	file := fs.String("config", "", "JSON values `FILE`, as the setup page saves it")
	asJSON := fs.Bool("json", false, `print {"valid": true, "warnings": [...]}, or the error as JSON with each setting to fix`)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	warnings, err := config.Check()
	if !*asJSON {
		for _, w := range warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
	}
	if err != nil {
		return exitCode{2, fmt.Errorf("declaration invalid:\n%w", err)}
	}
	if *asJSON {
		if _, err := loadConfig(getenv, *file); err != nil {
			return err
		}
		ws := []string{}
		for _, w := range warnings {
			ws = append(ws, w.String())
		}
		for _, name := range config.UnknownEnv(os.Environ()) {
			ws = append(ws, name+" matches no setting and is ignored")
		}
		return writeJSON(stdout, map[string]any{"valid": true, "warnings": ws})
	}
	warnUnknownEnv(stderr)
	if _, err := loadConfig(getenv, *file); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "configuration valid")
	return err
}
