package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/callbus/callbus/config"
)

// runConfig is `poller config validate|docs|schema`.
func runConfig(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return exitCode{2, fmt.Errorf("config: want validate, docs or schema")}
	}
	switch args[0] {
	case "validate":
		fs := flag.NewFlagSet("config validate", flag.ContinueOnError)
		fs.SetOutput(stderr)
		file := fs.String("config", "", "JSON values file")
		if err := fs.Parse(args[1:]); err != nil {
			return exitCode{2, err}
		}
		warnings, err := config.Check()
		for _, w := range warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		if err != nil {
			return exitCode{2, fmt.Errorf("declaration invalid:\n%w", err)}
		}
		if *file == "" && !anyValue(getenv) {
			_, err = fmt.Fprintln(stdout, "declaration valid; no values given (set CALLBUS_* or --config FILE), so none checked")
			return err
		}
		if _, err := config.Load(getenv, *file); err != nil {
			if config.IsInvalid(err) {
				return exitCode{2, fmt.Errorf("invalid configuration:\n%w", err)}
			}
			return err
		}
		_, err = fmt.Fprintln(stdout, "configuration valid")
		return err
	case "docs":
		doc, err := config.Docs()
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, doc)
		return err
	case "schema":
		b, err := config.Schema()
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	return exitCode{2, fmt.Errorf("config %q: want validate, docs or schema", args[0])}
}

// anyValue reports whether the environment sets any parameter (CALLBUS_<KEY> or
// CALLBUS_<KEY>_FILE).
func anyValue(getenv func(string) string) bool {
	d, err := config.Declarations()
	if err != nil {
		return false
	}
	for _, k := range d.Keys() {
		if getenv(d.EnvVar(k)) != "" || getenv(d.EnvVar(k)+"_FILE") != "" {
			return true
		}
	}
	return false
}
