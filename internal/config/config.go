// Package config owns the service's settings: one Config struct read from flags with
// MOCKGATEWAY_* environment fallbacks, validated once at start-up. OpenTelemetry settings are
// not here: they use the standard OTEL_* variables, read by observability.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of the service.
type Config struct {
	Addr        string
	CatalogPath string
	APIKey      string // a local key for /v1/*, never a provider credential; never printed
	LogLevel    string
	LogFormat   string
	// LogFile, when set, receives a copy of the log: a container's stderr is out of reach of a
	// sidecar such as the redaction audit, a shared file is not.
	LogFile string
	// AllowSimulationHeaders lets requests choose simulated faults and latency with x-mock-*
	// headers; off, only the catalog decides.
	AllowSimulationHeaders bool

	MaxBodyBytes      int64
	MaxTokens         int // ceiling for max_tokens / max_completion_tokens
	MaxChoices        int
	MaxConcurrent     int
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included: a client trickling its body
	// must not hold a connection and a concurrency slot for ever.
	ReadTimeout   time.Duration
	IdleTimeout   time.Duration
	StreamTimeout time.Duration // a stream's total duration
	// DrainTimeout is how long shutdown lets open streams run before ending them with a
	// shutting_down error frame.
	DrainTimeout time.Duration
	// TraceBuffer is how many spans /debug/traces keeps.
	TraceBuffer int
}

// ErrHelp is returned when --help was asked for; the usage has been written.
var ErrHelp = flag.ErrHelp

// ErrVersion is returned when --version was asked for.
var ErrVersion = errors.New("version requested")

type setting struct {
	name, env, usage string
	def              string
	set              func(string) error
}

// Parse reads args (without the program name) with getenv as the fallback for every flag not
// given. Usage and errors go to stderr.
func Parse(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	var c Config
	settings := []setting{
		{"addr", "MOCKGATEWAY_ADDR", "listen address host:port (port 0 picks a free port)", "127.0.0.1:8080", str(&c.Addr)},
		{"catalog", "MOCKGATEWAY_CATALOG", "YAML file replacing the built-in model catalog", "", str(&c.CatalogPath)},
		{"api-key", "MOCKGATEWAY_API_KEY", "local key required as 'Authorization: Bearer <key>' on /v1/* (empty: no key)", "", str(&c.APIKey)},
		{"log-level", "MOCKGATEWAY_LOG_LEVEL", "debug, info, warn or error", "info", str(&c.LogLevel)},
		{"log-format", "MOCKGATEWAY_LOG_FORMAT", "json or text", "json", str(&c.LogFormat)},
		{"log-file", "MOCKGATEWAY_LOG_FILE", "also append the log to this file", "", str(&c.LogFile)},
		{"allow-simulation-headers", "MOCKGATEWAY_ALLOW_SIMULATION_HEADERS", "let x-mock-* request headers choose simulated faults and latency", "true", boolOf(&c.AllowSimulationHeaders)},
		{"max-body-bytes", "MOCKGATEWAY_MAX_BODY_BYTES", "largest request body accepted", "1048576", int64Of(&c.MaxBodyBytes)},
		{"max-tokens", "MOCKGATEWAY_MAX_TOKENS", "ceiling for max_tokens and max_completion_tokens", "4096", intOf(&c.MaxTokens)},
		{"max-choices", "MOCKGATEWAY_MAX_CHOICES", "largest n", "128", intOf(&c.MaxChoices)},
		{"max-concurrent", "MOCKGATEWAY_MAX_CONCURRENT", "concurrent /v1 requests before 429 server_busy", "1024", intOf(&c.MaxConcurrent)},
		{"read-header-timeout", "MOCKGATEWAY_READ_HEADER_TIMEOUT", "time allowed to read request headers", "5s", durationOf(&c.ReadHeaderTimeout)},
		{"read-timeout", "MOCKGATEWAY_READ_TIMEOUT", "time allowed to read a whole request, body included", "30s", durationOf(&c.ReadTimeout)},
		{"idle-timeout", "MOCKGATEWAY_IDLE_TIMEOUT", "keep-alive idle timeout", "120s", durationOf(&c.IdleTimeout)},
		{"stream-timeout", "MOCKGATEWAY_STREAM_TIMEOUT", "a stream's total duration before it ends with stream_timeout", "5m", durationOf(&c.StreamTimeout)},
		{"drain-timeout", "MOCKGATEWAY_DRAIN_TIMEOUT", "on shutdown, how long open streams may go on before they end with shutting_down", "5s", durationOf(&c.DrainTimeout)},
		{"trace-buffer", "MOCKGATEWAY_TRACE_BUFFER", "spans kept in memory for /debug/traces", "4096", intOf(&c.TraceBuffer)},
	}

	fs := flag.NewFlagSet("mockgateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	given := map[string]*string{}
	for _, s := range settings {
		given[s.name] = fs.String(s.name, "", "")
	}
	version := fs.Bool("version", false, "print version and release, then exit")
	fs.Usage = func() { usage(stderr, settings) }
	if err := fs.Parse(args); err != nil {
		return c, err // flag has already printed the problem and the usage
	}
	if *version {
		return c, ErrVersion
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q; settings are flags (see --help)", fs.Arg(0))
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	for _, s := range settings {
		v, from := s.def, "default"
		if explicit[s.name] {
			v, from = *given[s.name], "--"+s.name
		} else if e := getenv(s.env); e != "" {
			v, from = e, s.env
		}
		if err := s.set(v); err != nil {
			if s.name == "api-key" {
				return c, fmt.Errorf("%s: invalid", from)
			}
			return c, fmt.Errorf("%s: %v", from, err)
		}
	}
	return c, c.validate()
}

func usage(w io.Writer, settings []setting) {
	fmt.Fprintf(w, "Usage: mockgateway [flags]\n\nA local mock of an LLM gateway (OpenAI Chat Completions subset). Every flag has an\nenvironment fallback; OpenTelemetry uses the standard OTEL_* variables.\n\nFlags:\n")
	for _, s := range settings {
		def := ""
		if s.def != "" {
			def = " (default " + s.def + ")"
		}
		fmt.Fprintf(w, "  --%-20s %s%s\n  %-22s env %s\n", s.name, s.usage, def, "", s.env)
	}
	fmt.Fprintf(w, "  --%-20s %s\n", "version", "print version and release, then exit")
}

func (c Config) validate() error {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("addr: must be host:port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("addr: port must be a number from 0 to 65535")
	}
	_ = host
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log-level: must be debug, info, warn or error")
	}
	switch strings.ToLower(c.LogFormat) {
	case "json", "text":
	default:
		return fmt.Errorf("log-format: must be json or text")
	}
	checks := []struct {
		ok   bool
		what string
	}{
		{c.MaxBodyBytes >= 1024, "max-body-bytes: must be at least 1024"},
		{c.MaxTokens >= 1, "max-tokens: must be at least 1"},
		{c.MaxChoices >= 1 && c.MaxChoices <= 128, "max-choices: must be from 1 to 128"},
		{c.MaxConcurrent >= 1, "max-concurrent: must be at least 1"},
		{c.ReadHeaderTimeout > 0, "read-header-timeout: must be positive"},
		{c.ReadTimeout >= c.ReadHeaderTimeout, "read-timeout: must be at least read-header-timeout"},
		{c.IdleTimeout > 0, "idle-timeout: must be positive"},
		{c.StreamTimeout > 0, "stream-timeout: must be positive"},
		{c.DrainTimeout >= 0, "drain-timeout: must not be negative"},
		{c.TraceBuffer >= 1, "trace-buffer: must be at least 1"},
	}
	for _, ch := range checks {
		if !ch.ok {
			return errors.New(ch.what)
		}
	}
	return nil
}

// LogValue prints the config with the key masked: a log line must never carry it.
func (c Config) LogValue() slog.Value {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("catalog", orBuiltin(c.CatalogPath)),
		slog.String("api_key", key),
		slog.String("log_level", c.LogLevel),
		slog.String("log_format", c.LogFormat),
		slog.String("log_file", c.LogFile),
		slog.Bool("allow_simulation_headers", c.AllowSimulationHeaders),
		slog.Int64("max_body_bytes", c.MaxBodyBytes),
		slog.Int("max_tokens", c.MaxTokens),
		slog.Int("max_choices", c.MaxChoices),
		slog.Int("max_concurrent", c.MaxConcurrent),
		slog.String("read_header_timeout", c.ReadHeaderTimeout.String()),
		slog.String("read_timeout", c.ReadTimeout.String()),
		slog.String("idle_timeout", c.IdleTimeout.String()),
		slog.String("stream_timeout", c.StreamTimeout.String()),
		slog.String("drain_timeout", c.DrainTimeout.String()),
		slog.Int("trace_buffer", c.TraceBuffer),
	)
}

func orBuiltin(p string) string {
	if p == "" {
		return "built-in"
	}
	return p
}

func str(p *string) func(string) error {
	return func(v string) error { *p = v; return nil }
}

func boolOf(p *bool) func(string) error {
	return func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*p = b
		return nil
	}
}

func intOf(p *int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errors.New("must be a whole number")
		}
		*p = n
		return nil
	}
}

func int64Of(p *int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errors.New("must be a whole number")
		}
		*p = n
		return nil
	}
}

func durationOf(p *time.Duration) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return errors.New("must be a duration such as 500ms, 5s or 2m")
		}
		*p = d
		return nil
	}
}
