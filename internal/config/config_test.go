package config

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Parse(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.MaxBodyBytes != 1<<20 || c.MaxTokens != 4096 || c.MaxChoices != 128 ||
		c.MaxConcurrent != 1024 || c.ReadHeaderTimeout != 5*time.Second || c.IdleTimeout != 120*time.Second || c.WriteTimeout != 30*time.Second ||
		c.StreamTimeout != 5*time.Minute || c.LogFormat != "json" || c.LogLevel != "info" {
		t.Errorf("defaults = %+v", c)
	}
}

func TestFlagsWinOverEnvironment(t *testing.T) {
	e := env(map[string]string{"MOCKGATEWAY_ADDR": "0.0.0.0:9000", "MOCKGATEWAY_MAX_TOKENS": "100", "MOCKGATEWAY_API_KEY": "k"})
	c, err := Parse([]string{"--max-tokens", "200"}, e, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "0.0.0.0:9000" || c.MaxTokens != 200 || c.APIKey != "k" {
		t.Errorf("got %+v", c)
	}
}

func TestInvalid(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--addr", "nope"}, nil, "addr"},
		{[]string{"--addr", "127.0.0.1:99999"}, nil, "port"},
		{[]string{"--log-level", "loud"}, nil, "log-level"},
		{[]string{"--log-format", "xml"}, nil, "log-format"},
		{nil, map[string]string{"MOCKGATEWAY_MAX_TOKENS": "lots"}, "MOCKGATEWAY_MAX_TOKENS"},
		{[]string{"--stream-timeout", "forever"}, nil, "--stream-timeout"},
		{[]string{"--max-choices", "500"}, nil, "max-choices"},
		{[]string{"--max-response-bytes", "2000000000"}, nil, "max-response-bytes"},
		{[]string{"--write-timeout", "0s"}, nil, "write-timeout"},
		{nil, map[string]string{"MOCKGATEWAY_WRITE_TIMEOUT": "soon"}, "MOCKGATEWAY_WRITE_TIMEOUT"},
		{[]string{"stray"}, nil, "unexpected argument"},
	}
	for _, c := range cases {
		_, err := Parse(c.args, env(c.env), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: error %v, want mention of %q", c.args, c.env, err, c.want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	var out bytes.Buffer
	if _, err := Parse([]string{"--help"}, env(nil), &out); !errors.Is(err, ErrHelp) {
		t.Fatalf("help: %v", err)
	}
	for _, name := range []string{"--addr", "MOCKGATEWAY_ADDR", "--catalog", "--api-key", "--log-level", "--log-format", "--max-body-bytes", "--drain-timeout", "--write-timeout", "MOCKGATEWAY_WRITE_TIMEOUT", "--version"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("--help does not list %s", name)
		}
	}
	if _, err := Parse([]string{"--version"}, env(nil), &out); !errors.Is(err, ErrVersion) {
		t.Errorf("version: %v", err)
	}
}

func TestLogValueMasksKey(t *testing.T) {
	c, _ := Parse([]string{"--api-key", "super-secret-key"}, env(nil), &bytes.Buffer{})
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "config", c)
	if strings.Contains(buf.String(), "super-secret") || !strings.Contains(buf.String(), `"api_key":"set"`) {
		t.Errorf("config log: %s", buf.String())
	}
}

// TestBrowserLists: --cors-origins and --allowed-hosts are comma-separated lists, from a flag or
// the environment; an entry that is no origin (a path, a wildcard, no scheme) or no host name
// (a port, a path) stops start-up.
func TestBrowserLists(t *testing.T) {
	c, err := Parse([]string{"--cors-origins", "http://localhost:5173, https://app.test"},
		env(map[string]string{"MOCKGATEWAY_ALLOWED_HOSTS": "mockgateway,.corp.test,[fd00::1],10.0.0.2", "MOCKGATEWAY_CORS_ORIGINS": "http://ignored.test"}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.CORSOrigins, " ") != "http://localhost:5173 https://app.test" || strings.Join(c.AllowedHosts, " ") != "mockgateway .corp.test [fd00::1] 10.0.0.2" {
		t.Errorf("got %q %q", c.CORSOrigins, c.AllowedHosts)
	}
	if c, _ := Parse(nil, env(nil), &bytes.Buffer{}); c.CORSOrigins != nil || c.AllowedHosts != nil {
		t.Errorf("defaults %q %q", c.CORSOrigins, c.AllowedHosts)
	}
	for _, bad := range []struct{ name, value string }{
		{"cors-origins", "*"}, {"cors-origins", "localhost:5173"}, {"cors-origins", "http://localhost:5173/"},
		{"cors-origins", "http://localhost:5173/app"}, {"cors-origins", "http://*.test"}, {"cors-origins", "ftp://x.test"},
		{"allowed-hosts", "mock:8080"}, {"allowed-hosts", "a/b"}, {"allowed-hosts", "*.test"}, {"allowed-hosts", "."},
	} {
		if _, err := Parse([]string{"--" + bad.name, bad.value}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), bad.name) {
			t.Errorf("--%s %q: %v", bad.name, bad.value, err)
		}
	}
}
