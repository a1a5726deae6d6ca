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
	"net/url"
	"strconv"
	"strings"
	"time"

	"mockgateway/internal/flagenv"
)

// Config is every setting of the service.
type Config struct {
	Addr        string
	CatalogPath string
	APIKey      string // a local key for /v1/*, never a provider credential; never printed
	LogLevel    string
	LogFormat   string
	// LogFile, when set, is the log's sink, rotated at LogMaxSizeMB with LogMaxBackups kept: a
	// container's stderr is out of reach of a sidecar such as the redaction audit, a shared file
	// is not. stderr keeps the lines that are not access lines, and with LogStderr those too.
	LogFile       string
	LogStderr     bool
	LogMaxSizeMB  int
	LogMaxBackups int
	// AccessLog keeps every access line ("all"), only those of failures ("errors"), or those
	// and one success in AccessLogSample ("sample"): a load test need not fill a disk.
	AccessLog       string
	AccessLogSample int
	// AllowSimulationHeaders lets requests choose simulated faults and latency with x-mock-*
	// headers; off, only the catalog decides.
	AllowSimulationHeaders bool
	// AttemptKeys and AttemptTTL bound the attempt counter of clients that retry without an
	// attempt header: at most AttemptKeys requests are remembered, each for AttemptTTL after
	// its last attempt.
	AttemptKeys int
	AttemptTTL  time.Duration
	// QuotaKeys bounds the simulated quota keys kept across all scopes (internal/quota): one
	// per model, client key, scope and limits; past it, in this process the key used longest
	// ago starts full again, in the shared store the key that will be full soonest.
	QuotaKeys int

	MaxBodyBytes int64
	MaxTokens    int // ceiling for max_tokens / max_completion_tokens
	MaxChoices   int
	// MaxResponseBytes bounds the content and tool arguments of one answer, shared by its
	// choices: a token can be a long string, so --max-tokens alone does not bound bytes.
	MaxResponseBytes  int
	MaxConcurrent     int
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included: a client trickling its body
	// must not hold a connection for ever. (It holds no concurrency slot meanwhile: a request
	// takes one only once its body is in.) Beyond it: 408 request_timeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing an answer: a JSON body as a whole, a stream on each write. A
	// client that stops reading must not hold its connection, its concurrency slot and the
	// answer's memory for ever. Waiting (simulated latency, a stall) is not writing: the
	// deadline is set just before each write.
	WriteTimeout  time.Duration
	IdleTimeout   time.Duration
	StreamTimeout time.Duration // a stream's total duration
	// DrainTimeout is how long shutdown lets open streams run before ending them with a
	// shutting_down error frame.
	DrainTimeout time.Duration
	// DrainQuiet is how long, on shutdown, no connection may have started a request before the
	// idle keep-alive connections are closed: closing one sooner could reset a request its
	// client was just sending.
	DrainQuiet time.Duration
	// FixturesPath is a fixture file or directory (docs/fixtures.md); FixturesStrict answers a
	// request no fixture matches with 400 no_fixture_match; FixturesReload is how often the
	// files are checked for changes.
	FixturesPath   string
	FixturesStrict bool
	FixturesReload time.Duration
	// MaxFixtureFileBytes caps one fixture file: a larger one is refused unread.
	MaxFixtureFileBytes int64
	// MaxScopes bounds the scopes that hold runtime fixtures and reply counters, and the
	// journal's scopes; MaxScopeFixtures the runtime fixtures of one scope; JournalEntries the
	// calls the journal keeps per scope.
	MaxScopes        int
	MaxScopeFixtures int
	MaxFixtureBytes  int // runtime fixtures held in all scopes together: bodies and compiled regexes
	// ScopeTTL is how long a scope that only counts replies is kept after its last call.
	ScopeTTL time.Duration
	// MaxRegexProgram bounds one regex's compiled program (a fixture condition, a schema
	// pattern), in instructions; RegexBudget one request's regex work, in steps
	// (docs/fixtures.md, "What a regex may cost").
	MaxRegexProgram int
	RegexBudget     int
	JournalEntries  int
	// JournalScopes bounds the scopes the journal keeps (the least recently used goes first),
	// apart from the unscoped journal: with JournalEntries, what bounds its memory.
	JournalScopes int
	// JournalFlushReads bounds, with a state store, the reads of the unscoped journal waiting
	// for the replicas' writers at once; beyond, 429 server_busy (docs/fixtures.md).
	JournalFlushReads int
	// StateStore is where runtime state lives: "" in this process, or a redis:// or rediss://
	// URL shared by replicas (internal/state). It may hold a password: LogValue masks it.
	// StateTTL is how long a scope's shared state is kept after its last write.
	StateStore string
	StateTTL   time.Duration
	// TraceProbes traces /health and /metrics too. Off, they are still measured and logged, but
	// a probe every few seconds and a scrape every fifteen do not fill the trace buffer and
	// Jaeger with spans nobody reads.
	TraceProbes bool
	// TraceBuffer is how many spans /debug/traces keeps.
	TraceBuffer int
	// CORSOrigins are the web origins (scheme://host[:port]) besides the mock's own that may call
	// it from a browser, with CORS answers; AllowedHosts the Host names answered besides
	// localhost, *.localhost and IP addresses, whatever the listener (docs/console.md).
	CORSOrigins  []string
	AllowedHosts []string
	// GCFloorMB is the floor under the garbage collector's heap target, in MiB (see
	// internal/gcfloor); 0 leaves the collector at Go's default. Ignored when GOGC is set.
	GCFloorMB int
	// SealKey seals what clients send back (internal/seal); never printed. Unset: a random key
	// per process, so replicas behind one address must share one.
	SealKey string
}

// ErrHelp is returned when --help was asked for; the usage has been written.
var ErrHelp = flag.ErrHelp

// ErrVersion is returned when --version was asked for.
var ErrVersion = errors.New("version requested")

// setting ties a flagenv.Setting to the Config field it fills.
type setting struct {
	flagenv.Setting
	set func(string) error
}

// Parse reads args (without the program name) with getenv as the fallback for every flag not
// given. Usage and errors go to stderr.
func Parse(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	var c Config
	settings := []setting{
		{flagenv.Setting{Name: "addr", Env: "MOCKGATEWAY_ADDR", Default: "127.0.0.1:8080", Usage: "listen address host:port (port 0 picks a free port)"}, str(&c.Addr)},
		{flagenv.Setting{Name: "catalog", Env: "MOCKGATEWAY_CATALOG", Usage: "YAML file replacing the built-in model catalog"}, str(&c.CatalogPath)},
		{flagenv.Setting{Name: "api-key", Env: "MOCKGATEWAY_API_KEY", Usage: "local key required as 'Authorization: Bearer <key>' on /v1/* (empty: no key)"}, str(&c.APIKey)},
		{flagenv.Setting{Name: "seal-key", Env: "MOCKGATEWAY_SEAL_KEY", Usage: "key (16 characters or more) that seals reasoning's encrypted_content and thinking signatures; replicas share it (empty: random per process)"}, str(&c.SealKey)},
		{flagenv.Setting{Name: "log-level", Env: "MOCKGATEWAY_LOG_LEVEL", Default: "info", Usage: "debug, info, warn or error"}, str(&c.LogLevel)},
		{flagenv.Setting{Name: "log-format", Env: "MOCKGATEWAY_LOG_FORMAT", Default: "json", Usage: "json or text"}, str(&c.LogFormat)},
		{flagenv.Setting{Name: "log-file", Env: "MOCKGATEWAY_LOG_FILE", Usage: "append the log to this file (rotated by size) instead of stderr, which keeps the lines other than access lines"}, str(&c.LogFile)},
		{flagenv.Setting{Name: "log-stderr", Env: "MOCKGATEWAY_LOG_STDERR", Default: "false", Usage: "with --log-file, write the access lines to stderr too", Switch: true}, boolOf(&c.LogStderr)},
		{flagenv.Setting{Name: "log-max-size-mb", Env: "MOCKGATEWAY_LOG_MAX_SIZE_MB", Default: "100", Usage: "size in MiB at which --log-file is rotated"}, intOf(&c.LogMaxSizeMB)},
		{flagenv.Setting{Name: "log-max-backups", Env: "MOCKGATEWAY_LOG_MAX_BACKUPS", Default: "3", Usage: "rotated log files kept (FILE.1 the newest; 0: none)"}, intOf(&c.LogMaxBackups)},
		{flagenv.Setting{Name: "access-log", Env: "MOCKGATEWAY_ACCESS_LOG", Default: "all", Usage: "access lines kept: all, errors (4xx, 5xx, streams not completed) or sample (errors and 1 success in --access-log-sample)"}, str(&c.AccessLog)},
		{flagenv.Setting{Name: "access-log-sample", Env: "MOCKGATEWAY_ACCESS_LOG_SAMPLE", Default: "100", Usage: "with --access-log sample, keep the line of 1 successful request in this many"}, intOf(&c.AccessLogSample)},
		{flagenv.Setting{Name: "allow-simulation-headers", Env: "MOCKGATEWAY_ALLOW_SIMULATION_HEADERS", Default: "true", Usage: "let x-mock-* request headers choose simulated faults and latency", Switch: true}, boolOf(&c.AllowSimulationHeaders)},
		{flagenv.Setting{Name: "attempt-keys", Env: "MOCKGATEWAY_ATTEMPT_KEYS", Default: "10000", Usage: "requests remembered to count the attempts of clients that retry without an attempt header (0: off)"}, intOf(&c.AttemptKeys)},
		{flagenv.Setting{Name: "quota-keys", Env: "MOCKGATEWAY_QUOTA_KEYS", Default: "10000", Usage: "simulated quota keys kept across all scopes, in this process or in --state-store, one per model, client key, scope and limits (past it, the key used longest ago goes first; in the store, the one full soonest)"}, intOf(&c.QuotaKeys)},
		{flagenv.Setting{Name: "attempt-ttl", Env: "MOCKGATEWAY_ATTEMPT_TTL", Default: "60s", Usage: "how long such a request is remembered after its last attempt"}, durationOf(&c.AttemptTTL)},
		{flagenv.Setting{Name: "max-body-bytes", Env: "MOCKGATEWAY_MAX_BODY_BYTES", Default: "1048576", Usage: "largest request body accepted"}, int64Of(&c.MaxBodyBytes)},
		{flagenv.Setting{Name: "max-tokens", Env: "MOCKGATEWAY_MAX_TOKENS", Default: "4096", Usage: "the most tokens any answer holds; a budget above it, up to the model's output limit, is accepted and the answer stops here"}, intOf(&c.MaxTokens)},
		{flagenv.Setting{Name: "max-choices", Env: "MOCKGATEWAY_MAX_CHOICES", Default: "128", Usage: "largest n"}, intOf(&c.MaxChoices)},
		{flagenv.Setting{Name: "max-response-bytes", Env: "MOCKGATEWAY_MAX_RESPONSE_BYTES", Default: "4194304", Usage: "bytes of content and tool arguments in one answer, shared by its n choices; beyond, a choice is cut with finish_reason length"}, intOf(&c.MaxResponseBytes)},
		{flagenv.Setting{Name: "max-concurrent", Env: "MOCKGATEWAY_MAX_CONCURRENT", Default: "1024", Usage: "concurrent /v1 requests before 429 server_busy"}, intOf(&c.MaxConcurrent)},
		{flagenv.Setting{Name: "read-header-timeout", Env: "MOCKGATEWAY_READ_HEADER_TIMEOUT", Default: "5s", Usage: "time allowed to read request headers"}, durationOf(&c.ReadHeaderTimeout)},
		{flagenv.Setting{Name: "read-timeout", Env: "MOCKGATEWAY_READ_TIMEOUT", Default: "30s", Usage: "time allowed to read a whole request, body included"}, durationOf(&c.ReadTimeout)},
		{flagenv.Setting{Name: "write-timeout", Env: "MOCKGATEWAY_WRITE_TIMEOUT", Default: "30s", Usage: "time allowed to write a JSON answer, and each write of a stream, to a client that has stopped reading"}, durationOf(&c.WriteTimeout)},
		{flagenv.Setting{Name: "idle-timeout", Env: "MOCKGATEWAY_IDLE_TIMEOUT", Default: "120s", Usage: "keep-alive idle timeout"}, durationOf(&c.IdleTimeout)},
		{flagenv.Setting{Name: "stream-timeout", Env: "MOCKGATEWAY_STREAM_TIMEOUT", Default: "5m", Usage: "a stream's total duration before it ends with stream_timeout"}, durationOf(&c.StreamTimeout)},
		{flagenv.Setting{Name: "drain-timeout", Env: "MOCKGATEWAY_DRAIN_TIMEOUT", Default: "5s", Usage: "on shutdown, how long open streams may go on before they end with shutting_down"}, durationOf(&c.DrainTimeout)},
		{flagenv.Setting{Name: "drain-quiet", Env: "MOCKGATEWAY_DRAIN_QUIET", Default: "1s", Usage: "on shutdown, how long no request may start before idle keep-alive connections are closed"}, durationOf(&c.DrainQuiet)},
		{flagenv.Setting{Name: "fixtures", Env: "MOCKGATEWAY_FIXTURES", Usage: "fixture file or directory (YAML or JSON), reloaded when it changes"}, str(&c.FixturesPath)},
		{flagenv.Setting{Name: "fixtures-strict", Env: "MOCKGATEWAY_FIXTURES_STRICT", Default: "false", Usage: "answer a request that no fixture matches with 400 no_fixture_match", Switch: true}, boolOf(&c.FixturesStrict)},
		{flagenv.Setting{Name: "fixtures-reload", Env: "MOCKGATEWAY_FIXTURES_RELOAD", Default: "1s", Usage: "how often the fixture files are checked for changes"}, durationOf(&c.FixturesReload)},
		{flagenv.Setting{Name: "max-fixture-file-bytes", Env: "MOCKGATEWAY_MAX_FIXTURE_FILE_BYTES", Default: "16777216", Usage: "largest fixture file read; a larger one is refused without being read"}, int64Of(&c.MaxFixtureFileBytes)},
		{flagenv.Setting{Name: "max-scopes", Env: "MOCKGATEWAY_MAX_SCOPES", Default: "1024", Usage: "scopes (x-mock-scope) holding runtime fixtures or reply counters"}, intOf(&c.MaxScopes)},
		{flagenv.Setting{Name: "max-scope-fixtures", Env: "MOCKGATEWAY_MAX_SCOPE_FIXTURES", Default: "256", Usage: "runtime fixtures in one scope"}, intOf(&c.MaxScopeFixtures)},
		{flagenv.Setting{Name: "max-fixture-bytes", Env: "MOCKGATEWAY_MAX_FIXTURE_BYTES", Default: "67108864", Usage: "bytes of runtime fixtures (their request bodies and compiled regexes) held in all scopes together"}, intOf(&c.MaxFixtureBytes)},
		{flagenv.Setting{Name: "scope-ttl", Env: "MOCKGATEWAY_SCOPE_TTL", Default: "10m", Usage: "how long a scope without runtime fixtures keeps its reply counters after its last call"}, durationOf(&c.ScopeTTL)},
		{flagenv.Setting{Name: "max-regex-program", Env: "MOCKGATEWAY_MAX_REGEX_PROGRAM", Default: "5000", Usage: "instructions one compiled regex may have: a fixture's regex condition or a schema pattern"}, intOf(&c.MaxRegexProgram)},
		{flagenv.Setting{Name: "regex-budget", Env: "MOCKGATEWAY_REGEX_BUDGET", Default: "8388608", Usage: "regex steps (program instructions × bytes of text) one request's fixture matching and reply check may take"}, intOf(&c.RegexBudget)},
		{flagenv.Setting{Name: "journal-scopes", Env: "MOCKGATEWAY_JOURNAL_SCOPES", Default: "64", Usage: "scopes the journal keeps besides the unscoped one; beyond, the least recently used scope's calls go"}, intOf(&c.JournalScopes)},
		{flagenv.Setting{Name: "journal-entries", Env: "MOCKGATEWAY_JOURNAL_ENTRIES", Default: "1000", Usage: "calls the journal keeps per scope (0: no journal)"}, intOf(&c.JournalEntries)},
		{flagenv.Setting{Name: "journal-flush-reads", Env: "MOCKGATEWAY_JOURNAL_FLUSH_READS", Default: "64", Usage: "with --state-store: reads of the unscoped journal waiting for the replicas' writers at once; beyond, 429 server_busy"}, intOf(&c.JournalFlushReads)},
		{flagenv.Setting{Name: "state-store", Env: "MOCKGATEWAY_STATE_STORE", Usage: "redis:// or rediss:// URL of a Redis or Valkey the replicas share runtime fixtures, reply positions, attempts and the journal in (empty: this process)"}, str(&c.StateStore)},
		{flagenv.Setting{Name: "state-ttl", Env: "MOCKGATEWAY_STATE_TTL", Default: "1h", Usage: "how long the state store keeps a scope's state after its last write"}, durationOf(&c.StateTTL)},
		{flagenv.Setting{Name: "trace-probes", Env: "MOCKGATEWAY_TRACE_PROBES", Default: "false", Usage: "trace /health and /metrics requests too (they are always measured and logged)", Switch: true}, boolOf(&c.TraceProbes)},
		{flagenv.Setting{Name: "trace-buffer", Env: "MOCKGATEWAY_TRACE_BUFFER", Default: "4096", Usage: "spans kept in memory for /debug/traces"}, intOf(&c.TraceBuffer)},
		{flagenv.Setting{Name: "cors-origins", Env: "MOCKGATEWAY_CORS_ORIGINS", Usage: "comma-separated web origins (scheme://host[:port]) that may call the mock from a browser, with CORS answers; any other origin but its own is 403"}, listOf(&c.CORSOrigins, origin)},
		{flagenv.Setting{Name: "allowed-hosts", Env: "MOCKGATEWAY_ALLOWED_HOSTS", Usage: "comma-separated Host names answered besides localhost, *.localhost and IP addresses (.example.com: it and its subdomains); any other name is refused, whatever --addr is"}, listOf(&c.AllowedHosts, hostName)},
		{flagenv.Setting{Name: "gc-floor-mb", Env: "MOCKGATEWAY_GC_FLOOR_MB", Default: "32", Usage: "floor under the garbage collector's heap target, MiB (0: Go's default; GOGC, when set, wins)"}, intOf(&c.GCFloorMB)},
	}
	specs := make([]flagenv.Setting, 0, len(settings)+1)
	for _, s := range settings {
		specs = append(specs, s.Setting)
	}
	specs = append(specs, flagenv.Setting{Name: "version", Usage: "print version and release, then exit", Switch: true})
	about := "A local mock of an LLM gateway (OpenAI Chat Completions, the Responses API and\n" +
		"Anthropic Messages). Every flag has an environment fallback; OpenTelemetry uses the\n" +
		"standard OTEL_* variables.\n\n" +
		"Subcommands: healthcheck, traffic, audit, fixtures lint (each with --help)."
	v, err := flagenv.Parse("mockgateway", about, specs, args, getenv, stderr)
	if err != nil {
		return c, err // flag has already printed the problem and the usage
	}
	if v.Get("version") == "true" {
		return c, ErrVersion
	}
	for _, s := range settings {
		// set never quotes the value (the api key is a plain string and cannot fail).
		if err := s.set(v.Get(s.Name)); err != nil {
			return c, v.Errorf(s.Name, "%v", err)
		}
	}
	return c, c.validate()
}

func (c Config) validate() error {
	_, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("addr: must be host:port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("addr: port must be a number from 0 to 65535")
	}
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
	switch c.AccessLog {
	case "all", "errors", "sample":
	default:
		return fmt.Errorf("access-log: must be all, errors or sample")
	}
	checks := []struct {
		ok   bool
		what string
	}{
		{c.SealKey == "" || len(c.SealKey) >= 16, "seal-key: must be at least 16 characters"},
		{c.AccessLogSample >= 1, "access-log-sample: must be at least 1"},
		{c.LogMaxSizeMB >= 1 && c.LogMaxSizeMB <= 1<<20, "log-max-size-mb: must be from 1 to 1048576 (1 TiB)"},
		{c.LogMaxBackups >= 0 && c.LogMaxBackups <= 1000, "log-max-backups: must be from 0 to 1000"},
		{c.MaxBodyBytes >= 1024, "max-body-bytes: must be at least 1024"},
		{c.MaxTokens >= 1, "max-tokens: must be at least 1"},
		{c.MaxChoices >= 1 && c.MaxChoices <= 128, "max-choices: must be from 1 to 128"},
		{c.MaxResponseBytes >= 1 && c.MaxResponseBytes <= 1<<30, "max-response-bytes: must be from 1 to 1073741824 (1 GiB)"},
		{c.AttemptKeys >= 0, "attempt-keys: must not be negative"},
		{c.QuotaKeys >= 1, "quota-keys: must be at least 1"},
		{c.FixturesReload > 0, "fixtures-reload: must be positive"},
		{c.MaxScopes >= 1, "max-scopes: must be at least 1"},
		{c.MaxScopeFixtures >= 1, "max-scope-fixtures: must be at least 1"},
		{c.MaxFixtureBytes >= 1024, "max-fixture-bytes: must be at least 1024"},
		{c.MaxFixtureFileBytes >= 1024, "max-fixture-file-bytes: must be at least 1024"},
		{c.ScopeTTL > 0, "scope-ttl: must be positive"},
		{c.MaxRegexProgram >= 16, "max-regex-program: must be at least 16"},
		{c.RegexBudget >= 1024, "regex-budget: must be at least 1024"},
		{c.JournalEntries >= 0, "journal-entries: must not be negative"},
		{c.JournalScopes >= 1, "journal-scopes: must be at least 1"},
		{c.JournalFlushReads >= 1, "journal-flush-reads: must be at least 1"},
		{c.AttemptTTL > 0, "attempt-ttl: must be positive"},
		{c.StateTTL > 0, "state-ttl: must be positive"},
		{validStateStore(c.StateStore), "state-store: must be empty or a redis:// or rediss:// URL"},
		{c.MaxConcurrent >= 1, "max-concurrent: must be at least 1"},
		{c.ReadHeaderTimeout > 0, "read-header-timeout: must be positive"},
		{c.ReadTimeout >= c.ReadHeaderTimeout, "read-timeout: must be at least read-header-timeout"},
		{c.WriteTimeout > 0, "write-timeout: must be positive"},
		{c.IdleTimeout > 0, "idle-timeout: must be positive"},
		{c.StreamTimeout > 0, "stream-timeout: must be positive"},
		{c.DrainTimeout >= 0, "drain-timeout: must not be negative"},
		{c.DrainQuiet >= 0, "drain-quiet: must not be negative"},
		{c.TraceBuffer >= 1, "trace-buffer: must be at least 1"},
		{c.GCFloorMB >= 0 && c.GCFloorMB <= 4096, "gc-floor-mb: must be from 0 to 4096"},
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
	seal := "random"
	if c.SealKey != "" {
		seal = "set"
	}
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("catalog", orBuiltin(c.CatalogPath)),
		slog.String("api_key", key),
		slog.String("seal_key", seal),
		slog.String("log_level", c.LogLevel),
		slog.String("log_format", c.LogFormat),
		slog.String("log_file", c.LogFile),
		slog.Bool("log_stderr", c.LogStderr),
		slog.Int("log_max_size_mb", c.LogMaxSizeMB),
		slog.Int("log_max_backups", c.LogMaxBackups),
		slog.String("access_log", c.AccessLog),
		slog.Int("access_log_sample", c.AccessLogSample),
		slog.Bool("allow_simulation_headers", c.AllowSimulationHeaders),
		slog.String("fixtures", c.FixturesPath),
		slog.Bool("fixtures_strict", c.FixturesStrict),
		slog.String("fixtures_reload", c.FixturesReload.String()),
		slog.Int("max_scopes", c.MaxScopes),
		slog.Int("max_scope_fixtures", c.MaxScopeFixtures),
		slog.Int("max_fixture_bytes", c.MaxFixtureBytes),
		slog.Int64("max_fixture_file_bytes", c.MaxFixtureFileBytes),
		slog.String("scope_ttl", c.ScopeTTL.String()),
		slog.Int("max_regex_program", c.MaxRegexProgram),
		slog.Int("regex_budget", c.RegexBudget),
		slog.Int("journal_entries", c.JournalEntries),
		slog.Int("journal_scopes", c.JournalScopes),
		slog.Int("journal_flush_reads", c.JournalFlushReads),
		slog.String("state_store", maskURL(c.StateStore)),
		slog.String("state_ttl", c.StateTTL.String()),
		slog.Bool("trace_probes", c.TraceProbes),
		slog.Int("attempt_keys", c.AttemptKeys),
		slog.String("attempt_ttl", c.AttemptTTL.String()),
		slog.Int("quota_keys", c.QuotaKeys),
		slog.Int64("max_body_bytes", c.MaxBodyBytes),
		slog.Int("max_tokens", c.MaxTokens),
		slog.Int("max_choices", c.MaxChoices),
		slog.Int("max_response_bytes", c.MaxResponseBytes),
		slog.Int("max_concurrent", c.MaxConcurrent),
		slog.String("read_header_timeout", c.ReadHeaderTimeout.String()),
		slog.String("read_timeout", c.ReadTimeout.String()),
		slog.String("write_timeout", c.WriteTimeout.String()),
		slog.String("idle_timeout", c.IdleTimeout.String()),
		slog.String("stream_timeout", c.StreamTimeout.String()),
		slog.String("drain_timeout", c.DrainTimeout.String()),
		slog.String("drain_quiet", c.DrainQuiet.String()),
		slog.Int("trace_buffer", c.TraceBuffer),
		slog.Int("gc_floor_mb", c.GCFloorMB),
		slog.String("cors_origins", strings.Join(c.CORSOrigins, ",")),
		slog.String("allowed_hosts", strings.Join(c.AllowedHosts, ",")),
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

// listOf parses a comma-separated list, each entry checked by valid.
func listOf(p *[]string, valid func(string) error) func(string) error {
	return func(v string) error {
		*p = nil
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			if err := valid(e); err != nil {
				return err
			}
			*p = append(*p, e)
		}
		return nil
	}
}

// origin checks a web origin as a browser sends it in Origin: scheme://host[:port], nothing
// after, no wildcard.
func origin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.Contains(u.Host, "*") || strings.HasSuffix(o, "/") {
		return errors.New("each entry must be an origin such as http://localhost:5173 (scheme://host[:port], no path, no wildcard)")
	}
	return nil
}

// hostName checks a host name, an IP address or a .domain (its subdomains), without a port.
func hostName(h string) error {
	name := strings.TrimPrefix(h, ".")
	if name == "" || strings.ContainsAny(name, "/:*@ ") && net.ParseIP(strings.Trim(name, "[]")) == nil {
		return errors.New("each entry must be a host name, an IP address or .domain (its subdomains), without a port")
	}
	return nil
}
