// Package flagenv owns the one way mockgateway's commands read their settings: a flag, else an
// environment variable, else a default — with a usage text that lists both names of every
// setting and errors that say which source held a bad value (never the value itself, which may
// be a key).
package flagenv

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Setting is one flag with its environment fallback.
type Setting struct {
	Name    string // the flag, without dashes
	Env     string // the environment variable
	Default string
	Usage   string
	// Switch makes a boolean flag that takes no value and has no environment fallback
	// (--version, say); Get returns "true" when it was given.
	Switch bool
}

// Values are the parsed settings.
type Values struct {
	val  map[string]string
	from map[string]string
}

// Get returns the value of a setting.
func (v Values) Get(name string) string { return v.val[name] }

// From names where a setting's value came from: "--name", the environment variable, or
// "default". Errors about a value should name this, not the value.
func (v Values) From(name string) string { return v.from[name] }

// Errorf formats an error about the named setting, prefixed with its source.
func (v Values) Errorf(name, format string, a ...any) error {
	return fmt.Errorf("%s: %s", v.From(name), fmt.Sprintf(format, a...))
}

// Parse reads args for command. about is the usage text's opening paragraph. It returns
// flag.ErrHelp after printing the usage for --help, and an error for an unknown flag or a stray
// argument.
func Parse(command, about string, settings []Setting, args []string, getenv func(string) string, stderr io.Writer) (Values, error) {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	given := map[string]*string{}
	switches := map[string]*bool{}
	for _, s := range settings {
		if s.Switch {
			switches[s.Name] = fs.Bool(s.Name, false, s.Usage)
			continue
		}
		given[s.Name] = fs.String(s.Name, "", s.Usage)
	}
	fs.Usage = func() { usage(stderr, command, about, settings) }
	v := Values{val: map[string]string{}, from: map[string]string{}}
	if err := fs.Parse(args); err != nil {
		return v, err
	}
	if fs.NArg() > 0 {
		// Not quoted: a stray argument may be half of a secret split by the shell.
		return v, fmt.Errorf("unexpected argument (number %d); settings are flags (see --help)", len(args)-fs.NArg()+1)
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	for _, s := range settings {
		switch {
		case s.Switch:
			if *switches[s.Name] {
				v.val[s.Name], v.from[s.Name] = "true", "--"+s.Name
			}
		case explicit[s.Name]:
			v.val[s.Name], v.from[s.Name] = *given[s.Name], "--"+s.Name
		case s.Env != "" && getenv(s.Env) != "":
			v.val[s.Name], v.from[s.Name] = getenv(s.Env), s.Env
		default:
			v.val[s.Name], v.from[s.Name] = s.Default, "default"
		}
	}
	return v, nil
}

func usage(w io.Writer, command, about string, settings []Setting) {
	fmt.Fprintf(w, "Usage: %s [flags]\n\n%s\n\nFlags:\n", command, strings.TrimSpace(about))
	width := 0
	for _, s := range settings {
		width = max(width, len(s.Name))
	}
	for _, s := range settings {
		def := ""
		if s.Default != "" {
			def = " (default " + s.Default + ")"
		}
		fmt.Fprintf(w, "  --%-*s  %s%s\n", width, s.Name, s.Usage, def)
		if s.Env != "" {
			fmt.Fprintf(w, "    %-*s  env %s\n", width, "", s.Env)
		}
	}
}
