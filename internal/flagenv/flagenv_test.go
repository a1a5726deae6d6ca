package flagenv

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

var settings = []Setting{
	{Name: "addr", Env: "X_ADDR", Default: "127.0.0.1:1", Usage: "where"},
	{Name: "key", Env: "X_KEY", Usage: "secret"},
	{Name: "version", Usage: "print it", Switch: true},
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPrecedence(t *testing.T) {
	v, err := Parse("x", "about", settings, []string{"--key", "flag"}, env(map[string]string{"X_ADDR": "env", "X_KEY": "env"}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Get("addr") != "env" || v.From("addr") != "X_ADDR" || v.Get("key") != "flag" || v.From("key") != "--key" || v.Get("version") != "false" {
		t.Errorf("%+v", v)
	}
	v, _ = Parse("x", "about", settings, []string{"--version"}, env(nil), &bytes.Buffer{})
	if v.Get("addr") != "127.0.0.1:1" || v.From("addr") != "default" || v.Get("version") != "true" {
		t.Errorf("%+v", v)
	}
	if err := v.Errorf("addr", "bad %d", 1); err.Error() != "default: bad 1" {
		t.Error(err)
	}
}

func TestHelpAndErrors(t *testing.T) {
	var out bytes.Buffer
	if _, err := Parse("x", "about text", settings, []string{"--help"}, env(nil), &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: x [flags]", "about text", "--addr", "X_ADDR", "default 127.0.0.1:1", "--version"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := Parse("x", "", settings, []string{"stray"}, env(nil), &bytes.Buffer{}); err == nil {
		t.Error("stray argument accepted")
	}
	if _, err := Parse("x", "", settings, []string{"--nope"}, env(nil), &bytes.Buffer{}); err == nil {
		t.Error("unknown flag accepted")
	}
}

// TestSwitchForms: a switch reads as Go's boolean flags do — bare, =true, =false — and from its
// environment variable; the flag wins over the environment, and a bad value names its source,
// never the value.
func TestSwitchForms(t *testing.T) {
	switches := []Setting{
		{Name: "strict", Env: "X_STRICT", Default: "false", Usage: "off by default", Switch: true},
		{Name: "headers", Env: "X_HEADERS", Default: "true", Usage: "on by default", Switch: true},
		{Name: "version", Usage: "an action", Switch: true},
	}
	cases := []struct {
		args                     []string
		env                      map[string]string
		strict, headers, version string
		from                     string // where strict came from
	}{
		{nil, nil, "false", "true", "false", "default"},
		{[]string{"--strict"}, nil, "true", "true", "false", "--strict"},
		{[]string{"-strict"}, nil, "true", "true", "false", "--strict"},
		{[]string{"--strict=true"}, nil, "true", "true", "false", "--strict"},
		{[]string{"--strict=false"}, map[string]string{"X_STRICT": "true"}, "false", "true", "false", "--strict"},
		{[]string{"--headers=false"}, nil, "false", "false", "false", "default"},
		{[]string{"--headers=0", "--version"}, nil, "false", "false", "true", "default"},
		{nil, map[string]string{"X_STRICT": "true", "X_HEADERS": "false"}, "true", "false", "false", "X_STRICT"},
		{nil, map[string]string{"X_STRICT": "1"}, "true", "true", "false", "X_STRICT"},
		{[]string{"--strict", "--version=false"}, nil, "true", "true", "false", "--strict"},
	}
	for _, c := range cases {
		v, err := Parse("x", "", switches, c.args, env(c.env), &bytes.Buffer{})
		if err != nil {
			t.Errorf("%v %v: %v", c.args, c.env, err)
			continue
		}
		if v.Get("strict") != c.strict || v.Get("headers") != c.headers || v.Get("version") != c.version || v.From("strict") != c.from {
			t.Errorf("%v %v: strict %q from %s, headers %q, version %q; want %q from %s, %q, %q",
				c.args, c.env, v.Get("strict"), v.From("strict"), v.Get("headers"), v.Get("version"), c.strict, c.from, c.headers, c.version)
		}
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--strict=maybe-sk-123"}, nil, "--strict: must be true or false"},
		{nil, map[string]string{"X_HEADERS": "maybe-sk-123"}, "X_HEADERS: must be true or false"},
		// As for every Go tool, a switch's value follows "=": a separate word is an argument.
		{[]string{"--strict", "false"}, nil, "unexpected argument"},
	} {
		_, err := Parse("x", "", switches, c.args, env(c.env), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "maybe") {
			t.Errorf("%v %v: error %v, want %q without the value", c.args, c.env, err, c.want)
		}
	}
}

// TestUsageShowsSwitches: --help shows a switch as Go's flag package does, without a value
// placeholder, and says how to turn one off.
func TestUsageShowsSwitches(t *testing.T) {
	var out bytes.Buffer
	s := append(slices.Clone(settings), Setting{Name: "strict", Env: "X_STRICT", Usage: "be strict", Switch: true})
	if _, err := Parse("x", "", s, []string{"--help"}, env(nil), &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	for _, want := range []string{"--strict=false turns one off", "\n  --addr value  where", "\n  --strict      be strict", "\n  --version     print it"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
}
