package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/callbus/callbus/internal/iparams"
)

// fromFile marks a value read from the values file (--config) in sources.from.
const fromFile = "--config"

// sources records where Load found each value, to name a setting the way the user
// gave it, or can give it when it has no value.
type sources struct {
	d    *iparams.Declarations
	file string            // the values file, "" for none
	from map[string]string // key → the variable that gave the value, or fromFile
}

// name is how messages name the parameter key: the variable that gave its value
// (CALLBUS_API_KEY or CALLBUS_API_KEY_FILE), the key in the values file, or, when
// nothing gave it one, its variable.
func (s sources) name(key string) string {
	switch from := s.from[key]; {
	case from == fromFile:
		return fmt.Sprintf("%s (in %s)", key, filepath.Base(s.file))
	case from != "":
		return from
	case key == "--config":
		return key
	}
	if _, ok := s.d.Param(key); !ok {
		return key
	}
	return s.d.EnvVar(key)
}

// howToSet is the hint of a missing required value: the variables that can give
// it, and the values file's key when there is one.
func (s sources) howToSet(key string) string {
	v := s.d.EnvVar(key)
	if s.file != "" {
		return fmt.Sprintf("set %s, %s_FILE (a file holding the value) or %q in %s", v, v, key, filepath.Base(s.file))
	}
	return fmt.Sprintf("set %s or %s_FILE (a file holding the value)", v, v)
}

// loadError is Load's error: the problems by key (Unwrap gives iparams.Problems),
// rendered one a line with the names the user knows.
type loadError struct {
	ps  iparams.Problems
	src sources
}

func (e *loadError) Unwrap() error { return e.ps }

func (e *loadError) Error() string {
	var b strings.Builder
	noun := "problems"
	if len(e.ps) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(&b, "%d %s:", len(e.ps), noun)
	for _, p := range e.ps {
		msg := p.Message
		if p.Attr != "" {
			msg = p.Attr + ": " + msg
		}
		if msg == "required" && e.src.from[p.Key] == "" {
			msg += ": " + e.src.howToSet(p.Key)
		}
		fmt.Fprintf(&b, "\n  %s: %s", e.src.name(p.Key), msg)
	}
	return b.String()
}

// SettingProblem is one problem of an invalid configuration, named for the one
// who fixes it (`poller … --json` errors): Key is the setting's key, Setting how
// the user gives it (the variable, CALLBUS_API_KEY, or the entry of the values
// file) and File the file to fix ("" when a variable is).
type SettingProblem struct {
	Key     string `json:"key"`
	Setting string `json:"setting"`
	File    string `json:"file,omitempty"`
	Message string `json:"message"`
}

// SettingProblems lists the problems of an error of Load or ReadAccountFile, nil
// for any other error.
func SettingProblems(err error) []SettingProblem {
	var le *loadError
	var ae *AccountFileError
	var out []SettingProblem
	switch {
	case errors.As(err, &le):
		for _, p := range le.ps {
			sp := SettingProblem{Key: p.Key, Setting: le.src.name(p.Key), Message: p.Message}
			if p.Attr != "" {
				sp.Message = p.Attr + ": " + sp.Message
			}
			if sp.Message == "required" && le.src.from[p.Key] == "" {
				sp.Message += ": " + le.src.howToSet(p.Key)
			}
			if le.src.from[p.Key] == fromFile {
				sp.File = le.src.file
			}
			out = append(out, sp)
		}
	case errors.As(err, &ae):
		for _, p := range ae.Problems {
			out = append(out, SettingProblem{Key: p.Key, Setting: p.Key, File: ae.File, Message: p.String()})
		}
	}
	return out
}
