package config

import (
	"bytes"
	"errors"
	"log/slog"
	"regexp"
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

// TestBooleanFlags: each boolean setting works bare, with =true and =false, and from its
// environment variable, as the docs write them (docs/configuration.md) — including turning off
// --allow-simulation-headers, which is on by default.
func TestBooleanFlags(t *testing.T) {
	type bools struct{ simulation, strict, probes bool }
	cases := []struct {
		args []string
		env  map[string]string
		want bools
	}{
		{nil, nil, bools{true, false, false}},
		{[]string{"--fixtures-strict"}, nil, bools{true, true, false}},
		{[]string{"--fixtures-strict=true"}, nil, bools{true, true, false}},
		{[]string{"--fixtures-strict=false"}, map[string]string{"MOCKGATEWAY_FIXTURES_STRICT": "true"}, bools{true, false, false}},
		{nil, map[string]string{"MOCKGATEWAY_FIXTURES_STRICT": "true"}, bools{true, true, false}},
		{[]string{"--trace-probes"}, nil, bools{true, false, true}},
		{[]string{"--trace-probes=true"}, nil, bools{true, false, true}},
		{[]string{"--trace-probes=false"}, map[string]string{"MOCKGATEWAY_TRACE_PROBES": "true"}, bools{true, false, false}},
		{nil, map[string]string{"MOCKGATEWAY_TRACE_PROBES": "true"}, bools{true, false, true}},
		{[]string{"--allow-simulation-headers"}, nil, bools{true, false, false}},
		{[]string{"--allow-simulation-headers=true"}, map[string]string{"MOCKGATEWAY_ALLOW_SIMULATION_HEADERS": "false"}, bools{true, false, false}},
		{[]string{"--allow-simulation-headers=false"}, nil, bools{false, false, false}},
		{nil, map[string]string{"MOCKGATEWAY_ALLOW_SIMULATION_HEADERS": "false"}, bools{false, false, false}},
		{[]string{"--fixtures-strict", "--trace-probes", "--allow-simulation-headers=false", "--max-tokens", "9"}, nil, bools{false, true, true}},
	}
	for _, c := range cases {
		cfg, err := Parse(c.args, env(c.env), &bytes.Buffer{})
		if err != nil {
			t.Errorf("%v %v: %v", c.args, c.env, err)
			continue
		}
		if got := (bools{cfg.AllowSimulationHeaders, cfg.FixturesStrict, cfg.TraceProbes}); got != c.want {
			t.Errorf("%v %v: %+v, want %+v", c.args, c.env, got, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--fixtures-strict=yes"}, nil, "--fixtures-strict: must be true or false"},
		{nil, map[string]string{"MOCKGATEWAY_TRACE_PROBES": "yes"}, "MOCKGATEWAY_TRACE_PROBES: must be true or false"},
		{[]string{"--version=maybe"}, nil, "--version: must be true or false"},
	} {
		if _, err := Parse(c.args, env(c.env), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: error %v, want %q", c.args, c.env, err, c.want)
		}
	}
	// --help shows them as switches: no value placeholder, as Go's flag package prints a bool.
	var out bytes.Buffer
	if _, err := Parse([]string{"--help"}, env(nil), &out); !errors.Is(err, ErrHelp) {
		t.Fatal(err)
	}
	for _, name := range []string{"fixtures-strict", "trace-probes", "allow-simulation-headers", "version"} {
		if !regexp.MustCompile(`(?m)^  --` + name + ` +[a-z]`).MatchString(out.String()) {
			t.Errorf("--help does not show --%s as a switch:\n%s", name, out.String())
		}
	}
	if !regexp.MustCompile(`(?m)^  --addr value +listen`).MatchString(out.String()) {
		t.Errorf("--help does not show --addr as taking a value:\n%s", out.String())
	}
	// A boolean setting added later must be a switch too (flagenv.Setting.Switch).
	for _, m := range regexp.MustCompile(`(?m)^  --(\S+) value .*\(default (true|false)\)$`).FindAllStringSubmatch(out.String(), -1) {
		t.Errorf("--%s defaults to %s but takes a value: make it a switch", m[1], m[2])
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
