// Package flagenv owns the one way mockgateway's commands read their settings: a flag, else an
// environment variable, else a default — with a usage text that lists both names of every
// setting and errors that say which source held a bad value (never the value itself, which may
// be a key). Boolean settings are switches, as Go's flag package has them: --name alone is
// true, --name=true and --name=false set it.
package flagenv

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Setting is one flag with its environment fallback.
type Setting struct {
	Name    string // the flag, without dashes
	Env     string // the environment variable
	Default string
	Usage   string
	// Switch makes a boolean flag as Go's flag package has them: --name alone means true,
	// --name=true and --name=false set it, and Env (when set) is the fallback. The value is a
	// separate argument only after "=": in "--name false", false is a stray argument, as it is
	// for every Go tool. Get returns "true" or "false"; Default is one of those, or "" for false.
	Switch bool
}

// switchValue is a switch's flag: a flag.Value that tells the flag package it takes no value.
// It keeps the text as given, and Parse checks it as it checks a value from the environment:
// the flag package's own error would quote the value.
type switchValue struct{ s *string }

func (v switchValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}
func (v switchValue) Set(s string) error { *v.s = s; return nil }
func (v switchValue) IsBoolFlag() bool   { return true }

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
	for _, s := range settings {
		given[s.Name] = new(string)
		if s.Switch {
			fs.Var(switchValue{given[s.Name]}, s.Name, s.Usage)
			continue
		}
		fs.StringVar(given[s.Name], s.Name, "", s.Usage)
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
		case explicit[s.Name]:
			v.val[s.Name], v.from[s.Name] = *given[s.Name], "--"+s.Name
		case s.Env != "" && getenv(s.Env) != "":
			v.val[s.Name], v.from[s.Name] = getenv(s.Env), s.Env
		default:
			v.val[s.Name], v.from[s.Name] = s.Default, "default"
		}
		if s.Switch {
			b, err := strconv.ParseBool(cmp.Or(v.val[s.Name], "false"))
			if err != nil {
				return v, v.Errorf(s.Name, "must be true or false (or the flag alone, for true)")
			}
			v.val[s.Name] = strconv.FormatBool(b)
		}
	}
	return v, nil
}

// usage writes the flags as Go's flag package does: a flag that takes a value shows a
// placeholder after its name, a switch shows none.
func usage(w io.Writer, command, about string, settings []Setting) {
	fmt.Fprintf(w, "Usage: %s [flags]\n\n", command)
	if about = strings.TrimSpace(about); about != "" {
		fmt.Fprintf(w, "%s\n\n", about)
	}
	if sw := switchExample(settings); sw != "" {
		fmt.Fprintf(w, "Flags (--name value or --name=value; a switch takes no value: --%s=false turns one off):\n", sw)
	} else {
		fmt.Fprintf(w, "Flags (--name value or --name=value):\n")
	}
	names := make([]string, len(settings))
	width := 0
	for i, s := range settings {
		names[i] = s.Name
		if !s.Switch {
			names[i] += " value"
		}
		width = max(width, len(names[i]))
	}
	for i, s := range settings {
		def := ""
		if s.Default != "" {
			def = " (default " + s.Default + ")"
		}
		fmt.Fprintf(w, "  --%-*s  %s%s\n", width, names[i], s.Usage, def)
		if s.Env != "" {
			fmt.Fprintf(w, "    %-*s  env %s\n", width, "", s.Env)
		}
	}
}

// switchExample names a switch for the usage's heading: the first that is a setting (it has an
// environment fallback) rather than an action such as --version, else the first; "" if none.
func switchExample(settings []Setting) string {
	first := ""
	for _, s := range settings {
		switch {
		case s.Switch && s.Env != "":
			return s.Name
		case s.Switch && first == "":
			first = s.Name
		}
	}
	return first
}
