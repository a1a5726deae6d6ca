// Package audit owns the redaction audit (mockgateway audit): canary traffic through every
// client path of a running service, then a search of every telemetry source for the canaries.
//
// The audit is the black-box sibling of the in-process canary test (TelemetryTest in
// internal/server): it talks to a deployed service over HTTP only, so it judges what that
// deployment really writes — its log file, its /metrics, its trace backend, its Prometheus —
// rather than what the code is meant to do.
package audit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"mockgateway/internal/flagenv"
)

// Exit codes of the audit: main maps an *ExitError to os.Exit(ExitCode()).
const (
	ExitClean      = 0 // every requested source was searched and no canary was found
	ExitLeak       = 1 // a canary (or the API key) was found where it must not be
	ExitIncomplete = 2 // the audit could not run, or a requested source could not be searched
)

// ExitError is what Run returns when the audit is not clean: Code is ExitLeak or
// ExitIncomplete.
type ExitError struct {
	Code   int
	Reason string
}

func (e *ExitError) Error() string { return "audit: " + e.Reason }

// ExitCode is the process exit status the error stands for.
func (e *ExitError) ExitCode() int { return e.Code }

type config struct {
	target     string
	logs       string
	metricsURL string // "" when turned off
	traces     []string
	prometheus string
	wait       time.Duration
	timeout    time.Duration
	format     string
	apiKey     string
	service    string
	stateStore string // the service's --state-store; "" when not searched
	storePass  string // its password, searched for as a secret
}

// settings are the audit's flags; a function rather than a package variable, so nothing at
// package level can be changed.
func settings() []flagenv.Setting {
	return []flagenv.Setting{
		{Name: "target", Env: "MOCKGATEWAY_AUDIT_TARGET", Default: "http://127.0.0.1:8080", Usage: "the running service"},
		{Name: "logs", Env: "MOCKGATEWAY_AUDIT_LOGS", Usage: "the service's log: a file it appends to (--log-file), or - for standard input; JSON or text lines"},
		{Name: "metrics-url", Env: "MOCKGATEWAY_AUDIT_METRICS_URL", Usage: "the service's metrics, fetched as OpenMetrics so exemplars are included (default TARGET/metrics; none: skip)"},
		{Name: "traces", Env: "MOCKGATEWAY_AUDIT_TRACES", Default: "embedded", Usage: "comma-separated: embedded (TARGET/debug/traces), a Jaeger query URL (http://host:16686), otlp://HOST:PORT or otlp+grpc://HOST:PORT (a receiver the audit runs: start the service with OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT), or none"},
		{Name: "prometheus", Env: "MOCKGATEWAY_AUDIT_PROMETHEUS", Usage: "a Prometheus server that scrapes the service: every label value is searched"},
		{Name: "wait", Env: "MOCKGATEWAY_AUDIT_WAIT", Default: "15s", Usage: "the longest wait for the traffic to show in every source (polled: it ends early once all of it has)"},
		{Name: "timeout", Env: "MOCKGATEWAY_AUDIT_TIMEOUT", Default: "3m", Usage: "the longest the whole audit may take"},
		{Name: "format", Env: "MOCKGATEWAY_AUDIT_FORMAT", Default: "text", Usage: "text or json"},
		{Name: "api-key", Env: "MOCKGATEWAY_AUDIT_API_KEY", Usage: "the service's local API key, if it requires one; it is also searched for"},
		{Name: "state-store", Env: "MOCKGATEWAY_AUDIT_STATE_STORE", Usage: "the service's shared state store (its --state-store redis:// or rediss:// URL): every key is searched, but the audit's own scope's fixture bodies; the URL's password is searched for too and never printed"},
		{Name: "service-name", Env: "MOCKGATEWAY_AUDIT_SERVICE_NAME", Default: "mockgateway", Usage: "the service name to search for in Jaeger"},
	}
}

const about = `Sends fresh random canaries through every path a client can use of a running mockgateway, then
searches the service's logs, metrics, traces, Prometheus, its shared state store, its own error
responses and its call journal and fixture list (in a scope of its own, deleted at the end) for them.
Exit status: 0 clean, 1 a leak was found, 2 the audit could not run or a source could not be
searched (never a pass).`

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	v, err := flagenv.Parse("mockgateway audit", about, settings(), args, getenv, stderr)
	if err != nil {
		return config{}, err
	}
	val := map[string]string{}
	from := map[string]string{}
	for _, s := range settings() {
		val[s.Name], from[s.Name] = strings.TrimSpace(v.Get(s.Name)), v.From(s.Name)
	}

	var c config
	if c.target, err = httpURL(val["target"]); err != nil {
		return c, fmt.Errorf("%s: %v", from["target"], err)
	}
	c.logs = val["logs"]
	switch m := val["metrics-url"]; m {
	case "":
		c.metricsURL = c.target + "/metrics"
	case "none", "off":
	default:
		if c.metricsURL, err = httpURL(m); err != nil {
			return c, fmt.Errorf("%s: %v", from["metrics-url"], err)
		}
	}
	for _, t := range strings.Split(val["traces"], ",") {
		t = strings.TrimSpace(t)
		switch {
		case t == "" || t == "none" || t == "off":
		case t == "embedded":
			c.traces = append(c.traces, t)
		case strings.HasPrefix(t, "otlp://") || strings.HasPrefix(t, "otlp+grpc://"):
			scheme, hostport, _ := strings.Cut(t, "://")
			hostport = strings.TrimSuffix(hostport, "/")
			if _, _, err := net.SplitHostPort(hostport); err != nil {
				return c, fmt.Errorf("%s: %q: want %s://HOST:PORT", from["traces"], t, scheme)
			}
			c.traces = append(c.traces, scheme+"://"+hostport)
		default:
			u, err := httpURL(t)
			if err != nil {
				return c, fmt.Errorf("%s: %q is not embedded, none, otlp://HOST:PORT or a Jaeger URL: %v", from["traces"], t, err)
			}
			c.traces = append(c.traces, u)
		}
	}
	if p := val["prometheus"]; p != "" {
		if c.prometheus, err = httpURL(p); err != nil {
			return c, fmt.Errorf("%s: %v", from["prometheus"], err)
		}
	}
	if c.wait, err = time.ParseDuration(val["wait"]); err != nil || c.wait < 0 {
		return c, fmt.Errorf("%s: want a duration such as 15s", from["wait"])
	}
	if c.timeout, err = time.ParseDuration(val["timeout"]); err != nil || c.timeout <= 0 {
		return c, fmt.Errorf("%s: want a positive duration such as 3m", from["timeout"])
	}
	switch c.format = strings.ToLower(val["format"]); c.format {
	case "text", "json":
	default:
		return c, fmt.Errorf("%s: want text or json", from["format"])
	}
	c.apiKey = val["api-key"]
	c.service = val["service-name"]
	if c.stateStore = val["state-store"]; c.stateStore != "" {
		if c.storePass, err = parseStoreURL(c.stateStore); err != nil {
			return c, fmt.Errorf("%s: %v", from["state-store"], err)
		}
	}
	return c, nil
}

func httpURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an http:// or https:// URL")
	}
	return strings.TrimSuffix(s, "/"), nil
}

// Run is the audit subcommand.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return run(ctx, args, getenv, os.Stdin, stdout, stderr)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return &ExitError{Code: ExitIncomplete, Reason: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	a, err := newAuditor(cfg, stdin, stderr)
	if err != nil {
		return &ExitError{Code: ExitIncomplete, Reason: err.Error()}
	}
	rep := a.run(ctx)
	if err := rep.write(stdout, cfg.format); err != nil {
		return &ExitError{Code: ExitIncomplete, Reason: "writing the report: " + err.Error()}
	}
	switch rep.ExitCode {
	case ExitLeak:
		return &ExitError{Code: ExitLeak, Reason: fmt.Sprintf("%d leak(s) found", len(rep.Leaks))}
	case ExitIncomplete:
		return &ExitError{Code: ExitIncomplete, Reason: "incomplete: " + strings.Join(rep.Problems, "; ")}
	}
	return nil
}

type auditor struct {
	cfg     config
	can     *Canaries
	corr    *correlator
	traffic *traffic
	sources []source
	client  *http.Client
	stderr  io.Writer
}

func newAuditor(cfg config, stdin io.Reader, stderr io.Writer) (*auditor, error) {
	can, err := newCanaries()
	if err != nil {
		return nil, err
	}
	corr, err := newCorrelator()
	if err != nil {
		return nil, err
	}
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:               nil, // straight to the target: a proxy would be one more place canaries go
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 4,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	a := &auditor{cfg: cfg, can: can, corr: corr, client: client, stderr: stderr}
	a.traffic = &traffic{base: cfg.target, can: can, corr: corr, apiKey: cfg.apiKey, client: client, scope: scopePrefix + randomHex(8)}
	if cfg.apiKey != "" {
		can.AddSecret(cfg.apiKey, "the local API key (--api-key), sent as Authorization: Bearer")
	}
	a.sources = append(a.sources, &responsesSource{t: a.traffic})
	if cfg.logs != "" {
		a.sources = append(a.sources, &logsSource{path: cfg.logs, stdin: stdin})
	}
	if cfg.metricsURL != "" {
		a.sources = append(a.sources, &metricsSource{url: cfg.metricsURL, client: client})
	}
	for _, t := range cfg.traces {
		switch {
		case t == "embedded":
			a.sources = append(a.sources, &embeddedTraces{url: cfg.target + "/debug/traces?limit=1000000", client: client, apiKey: cfg.apiKey})
		case strings.HasPrefix(t, "otlp://"):
			a.sources = append(a.sources, &otlpReceiver{addr: strings.TrimPrefix(t, "otlp://")})
		case strings.HasPrefix(t, "otlp+grpc://"):
			a.sources = append(a.sources, &otlpReceiver{addr: strings.TrimPrefix(t, "otlp+grpc://"), grpc: true})
		default:
			a.sources = append(a.sources, &jaegerTraces{base: t, service: cfg.service, client: client})
		}
	}
	if cfg.prometheus != "" {
		a.sources = append(a.sources, &prometheusSource{base: cfg.prometheus, client: client})
	}
	if cfg.stateStore != "" {
		if cfg.storePass != "" {
			can.AddSecret(cfg.storePass, "the state store's password (--state-store)")
		}
		a.sources = append(a.sources, &storeSource{url: cfg.stateStore, scope: a.traffic.scope})
	}
	return a, nil
}

func (a *auditor) progress(format string, args ...any) {
	fmt.Fprintf(a.stderr, "mockgateway audit: "+format+"\n", args...)
}

// outcome is one source after the wait.
type outcome struct {
	src source
	col *collection
	err error
	// timedOut: the source was still waiting for some of the traffic when --wait ran out.
	timedOut bool
}

func (a *auditor) run(ctx context.Context) *Report {
	started := time.Now()
	rep := &Report{Schema: reportSchema, Target: a.cfg.target, StartedAt: started.UTC()}
	defer func() {
		for _, s := range a.sources {
			s.close()
		}
	}()

	outcomes := make([]*outcome, len(a.sources))
	for i, s := range a.sources {
		outcomes[i] = &outcome{src: s}
		if err := s.start(ctx); err != nil {
			outcomes[i].err = err
		}
	}

	t := a.traffic
	if err := t.discover(ctx); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		rep.finish(a, outcomes, started)
		return rep
	}
	t.build()
	a.progress("sending %d requests, then two or three oversized bodies, with %d canaries to %s", len(t.probes), a.can.Count(), a.cfg.target)
	t.sendAll(ctx)
	t.oversized(ctx)
	if ctx.Err() != nil {
		rep.Problems = append(rep.Problems, "the audit ran out of time (--timeout) while sending its traffic")
		rep.Notes = append(rep.Notes, t.dropScope()...)
		rep.finish(a, outcomes, started)
		return rep
	}

	exp := &expectation{corr: a.corr}
	for _, p := range t.probes {
		if p.Reached {
			exp.probes = append(exp.probes, p)
			exp.reached++
			if p.TraceID != "" || p.RequestID != "" {
				exp.traced = append(exp.traced, p)
			}
		}
	}
	a.progress("%d of %d requests reached the service (%.1fs); waiting up to %s for them to show in %d source(s)", exp.reached, len(t.probes), time.Since(started).Seconds(), a.cfg.wait, len(a.sources))
	waitStart := time.Now()
	deadline := waitStart.Add(a.cfg.wait)
	var wg sync.WaitGroup
	for _, o := range outcomes {
		if o.err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.col, o.err = o.src.collect(ctx, deadline, exp)
			// Every source's wait ends early once it holds what it can expect of the traffic:
			// one that returns only after the deadline was still waiting for some of it.
			o.timedOut = time.Now().After(deadline)
		}()
	}
	wg.Wait()
	rep.Wait.WaitedMS = time.Since(waitStart).Milliseconds()
	rep.Wait.TimedOut = []string{}
	for _, o := range outcomes {
		if o.timedOut {
			rep.Wait.TimedOut = append(rep.Wait.TimedOut, o.src.name())
		}
	}
	a.progress("searched the sources (%.1fs)", time.Since(started).Seconds())
	// The scope's journal has been read: drop the scope's fixtures, counters and journal.
	rep.Notes = append(rep.Notes, t.dropScope()...)
	rep.exp = exp
	rep.finish(a, outcomes, started)
	return rep
}
