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
		{[]string{"--access-log", "some"}, nil, "access-log"},
		{[]string{"--access-log-sample", "0"}, nil, "access-log-sample"},
		{[]string{"--log-max-size-mb", "0"}, nil, "log-max-size-mb"},
		{nil, map[string]string{"MOCKGATEWAY_LOG_MAX_BACKUPS": "-1"}, "log-max-backups"},
		{nil, map[string]string{"MOCKGATEWAY_LOG_STDERR": "yes please"}, "MOCKGATEWAY_LOG_STDERR"},
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
	c, _ := Parse([]string{"--api-key", "super-secret-key", "--seal-key", "sealing-secret-shared"}, env(nil), &bytes.Buffer{})
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "config", c)
	if strings.Contains(buf.String(), "super-secret") || !strings.Contains(buf.String(), `"api_key":"set"`) ||
		strings.Contains(buf.String(), "sealing-secret") || !strings.Contains(buf.String(), `"seal_key":"set"`) {
		t.Errorf("config log: %s", buf.String())
	}
}

// TestSealKey: the seal key comes from the flag or MOCKGATEWAY_SEAL_KEY; a short one stops
// start-up; unset, it is logged as random.
func TestSealKey(t *testing.T) {
	c, err := Parse(nil, env(map[string]string{"MOCKGATEWAY_SEAL_KEY": "sixteen-chars-at-least"}), &bytes.Buffer{})
	if err != nil || c.SealKey != "sixteen-chars-at-least" {
		t.Fatalf("%+v %v", c.SealKey, err)
	}
	if _, err := Parse([]string{"--seal-key", "short"}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "seal-key") {
		t.Errorf("a short key: %v", err)
	}
	c, _ = Parse(nil, env(nil), &bytes.Buffer{})
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "config", c)
	if !strings.Contains(buf.String(), `"seal_key":"random"`) {
		t.Errorf("config log: %s", buf.String())
	}
}

// TestLogSettings: the log's sink, rotation and access-log settings, from flags and the
// environment; by default the file is bounded (100 MiB and 3 backups) and every line is kept.
func TestLogSettings(t *testing.T) {
	c, err := Parse(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.LogStderr || c.LogMaxSizeMB != 100 || c.LogMaxBackups != 3 || c.AccessLog != "all" || c.AccessLogSample != 100 {
		t.Errorf("defaults %+v", c)
	}
	c, err = Parse([]string{"--log-stderr=true", "--access-log", "sample", "--access-log-sample", "10"},
		env(map[string]string{"MOCKGATEWAY_LOG_MAX_SIZE_MB": "5", "MOCKGATEWAY_LOG_MAX_BACKUPS": "0", "MOCKGATEWAY_ACCESS_LOG": "errors"}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.LogStderr || c.LogMaxSizeMB != 5 || c.LogMaxBackups != 0 || c.AccessLog != "sample" || c.AccessLogSample != 10 {
		t.Errorf("got %+v", c)
	}
}

// The regex bounds (issue 30): defaults, the environment's fallback, and a bound too small to
// mean anything refused.
func TestRegexBounds(t *testing.T) {
	c, err := Parse(nil, env(map[string]string{"MOCKGATEWAY_REGEX_BUDGET": "100000"}), &bytes.Buffer{})
	if err != nil || c.MaxRegexProgram != 5000 || c.RegexBudget != 100000 {
		t.Fatalf("%v: program %d, budget %d", err, c.MaxRegexProgram, c.RegexBudget)
	}
	for _, args := range [][]string{{"--max-regex-program", "3"}, {"--regex-budget", "10"}} {
		if _, err := Parse(args, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
