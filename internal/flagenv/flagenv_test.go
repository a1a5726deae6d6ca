package flagenv

import (
	"bytes"
	"errors"
	"flag"
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
	if v.Get("addr") != "env" || v.From("addr") != "X_ADDR" || v.Get("key") != "flag" || v.From("key") != "--key" || v.Get("version") != "" {
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
