package observability

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Exporter names reported in Tracing.Exporter and logged at start-up.
const (
	ExporterEmbedded = "embedded"
	ExporterOTLPHTTP = "otlp/http"
	ExporterOTLPGRPC = "otlp/grpc"
	ExporterDisabled = "disabled" // OTEL_SDK_DISABLED=true
)

// defaultServiceName is service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES
// names the service.
const defaultServiceName = "mockgateway"

// TracingConfig is what the binary knows about itself; everything else comes from the standard
// OTEL_* environment variables.
type TracingConfig struct {
	ServiceVersion string // e.g. "4.2.0"
	Release        string // e.g. "Gateway Foundation"
	BufferSize     int    // spans kept in memory for /debug/traces (default 4096 when 0)
}

// Tracing is the service's tracer provider and where its spans go.
type Tracing struct {
	Provider *sdktrace.TracerProvider
	// Buffer is always present: the embedded inspector keeps the most recent spans even when
	// OTLP export is on, so /debug/traces works in every deployment.
	Buffer *SpanBuffer
	// Exporter is "embedded", "otlp/http", "otlp/grpc" or "disabled"; logged at start-up.
	Exporter string
	// Sampler names the sampler as configured, e.g. "parentbased_always_on" or
	// "traceidratio:0.25"; logged at start-up.
	Sampler string
}

// NewTracing builds the tracer provider from the standard OpenTelemetry environment variables,
// read only through getenv so tests can configure it without touching the process environment.
// Every option is passed to the SDK and the exporters explicitly, and nothing global is set: the
// caller passes Provider (and Propagator) to whatever needs them.
//
// Every span passes the allowlists before it is kept or leaves: the in-memory buffer records only
// allowlisted attributes, and the OTLP exporter sits behind the redacting exporter, so no
// non-allowlisted attribute can leave the process whoever set it.
//
// Errors name the offending variable but never repeat its value, which may be a credential
// (headers, or user info in an endpoint URL).
func NewTracing(ctx context.Context, getenv func(string) string, cfg TracingConfig) (*Tracing, error) {
	t := &Tracing{Buffer: NewSpanBuffer(cfg.BufferSize)}

	disabled, err := envBool(getenv, "OTEL_SDK_DISABLED")
	if err != nil {
		return nil, err
	}
	if disabled {
		// A disabled SDK still hands out a working provider so callers need no special case;
		// it samples nothing and has no processors, so spans cost next to nothing.
		t.Exporter = ExporterDisabled
		t.Sampler = "always_off"
		t.Provider = sdktrace.NewTracerProvider(
			sdktrace.WithSampler(sdktrace.NeverSample()),
			sdktrace.WithResource(resource.Empty()),
			sdktrace.WithRawSpanLimits(defaultSpanLimits()),
		)
		return t, nil
	}

	res, err := newResource(getenv, cfg)
	if err != nil {
		return nil, err
	}
	sampler, samplerName, err := newSampler(getenv)
	if err != nil {
		return nil, err
	}
	t.Sampler = samplerName

	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler),
		// Explicit limits: without them the SDK reads OTEL_SPAN_* from the process environment.
		sdktrace.WithRawSpanLimits(defaultSpanLimits()),
		// Synchronous, so a span is visible at /debug/traces the moment it ends.
		// The buffer is its own processor: it keeps only the allowlisted parts of each ended
		// span, as a compact record under a short lock, instead of a simple processor's global
		// lock and a redacting copy on every request.
		sdktrace.WithSpanProcessor(t.Buffer),
	}

	// Parsed before the exporter exists so a bad value cannot leave a client behind.
	bsp, err := batchOptions(getenv)
	if err != nil {
		return nil, err
	}
	exp, name, err := newOTLPExporter(ctx, getenv)
	if err != nil {
		return nil, err
	}
	t.Exporter = name
	if exp != nil {
		opts = append(opts, sdktrace.WithBatcher(NewRedactingExporter(exp), bsp...))
	}

	t.Provider = sdktrace.NewTracerProvider(opts...)
	return t, nil
}

// Shutdown flushes pending spans to the exporters and shuts them down. The span buffer stays
// readable afterwards.
func (t *Tracing) Shutdown(ctx context.Context) error {
	return t.Provider.Shutdown(ctx)
}

// Propagator returns the W3C trace-context and baggage propagator the middleware uses to
// continue a caller's trace. It is returned rather than installed globally so the wiring stays
// visible in run.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

func defaultSpanLimits() sdktrace.SpanLimits {
	return sdktrace.SpanLimits{
		AttributeValueLengthLimit:   sdktrace.DefaultAttributeValueLengthLimit,
		AttributeValueDepthLimit:    sdktrace.DefaultAttributeValueDepthLimit,
		AttributeCountLimit:         sdktrace.DefaultAttributeCountLimit,
		EventCountLimit:             sdktrace.DefaultEventCountLimit,
		LinkCountLimit:              sdktrace.DefaultLinkCountLimit,
		AttributePerEventCountLimit: sdktrace.DefaultAttributePerEventCountLimit,
		AttributePerLinkCountLimit:  sdktrace.DefaultAttributePerLinkCountLimit,
	}
}

// newResource describes this process. The resource is built from explicit attributes only —
// resource.Default() would read OTEL_RESOURCE_ATTRIBUTES from the process environment.
func newResource(getenv func(string) string, cfg TracingConfig) (*resource.Resource, error) {
	const resVar = "OTEL_RESOURCE_ATTRIBUTES"
	pairs, err := parseKeyValueList(resVar, getenv(resVar))
	if err != nil {
		return nil, err
	}
	serviceName := strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	attrs := make([]attribute.KeyValue, 0, len(pairs)+6)
	for _, p := range pairs {
		if p.key == string(semconv.ServiceNameKey) {
			if serviceName == "" {
				serviceName = p.value
			}
			continue
		}
		attrs = append(attrs, attribute.String(p.key, p.value))
	}
	if serviceName == "" {
		serviceName = defaultServiceName
	}
	// Later duplicates win in an attribute set, so the build's own facts override anything an
	// operator put in OTEL_RESOURCE_ATTRIBUTES.
	attrs = append(attrs,
		semconv.ServiceName(serviceName),
		semconv.TelemetrySDKName("opentelemetry"),
		semconv.TelemetrySDKLanguageGo,
		semconv.TelemetrySDKVersion(sdk.Version()),
	)
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(cfg.ServiceVersion))
	}
	if cfg.Release != "" {
		attrs = append(attrs, attribute.String("mockgateway.release", cfg.Release))
	}
	return resource.NewWithAttributes(semconv.SchemaURL, attrs...), nil
}

// newSampler follows OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. Unlike the SDK, which
// falls back to the default on a bad value, it fails: a typo should not silently sample
// everything (or nothing).
func newSampler(getenv func(string) string) (sdktrace.Sampler, string, error) {
	const (
		samplerVar = "OTEL_TRACES_SAMPLER"
		argVar     = "OTEL_TRACES_SAMPLER_ARG"
	)
	name := strings.ToLower(strings.TrimSpace(getenv(samplerVar)))
	if name == "" {
		name = "parentbased_always_on"
	}
	ratio := func() (float64, error) {
		arg := strings.TrimSpace(getenv(argVar))
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("%s: want a ratio between 0 and 1", argVar)
		}
		return r, nil
	}
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), name, nil
	case "always_off":
		return sdktrace.NeverSample(), name, nil
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), name, nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), name, nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, "", err
		}
		s := sdktrace.TraceIDRatioBased(r)
		if name == "parentbased_traceidratio" {
			s = sdktrace.ParentBased(s)
		}
		return s, name + ":" + strconv.FormatFloat(r, 'g', -1, 64), nil
	}
	return nil, "", fmt.Errorf("%s: unsupported sampler; want one of always_on, always_off, "+
		"traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio", samplerVar)
}

// otlpSettings are the exporter options common to both protocols, resolved from the
// signal-specific variable first and the general one second, as the specification orders them.
type otlpSettings struct {
	endpoint    string // "" when neither endpoint variable is set
	endpointVar string // the variable endpoint came from, for error messages
	signal      bool   // endpoint came from the traces-specific variable (used as-is)
	headers     map[string]string
	insecure    bool
	gzip        bool
	timeout     time.Duration
}

// newOTLPExporter returns the OTLP exporter the environment asks for, or nil when spans stay in
// the embedded buffer only.
func newOTLPExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, string, error) {
	const exporterVar = "OTEL_TRACES_EXPORTER"

	var s otlpSettings
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		s.endpoint, s.endpointVar, s.signal = v, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", true
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		s.endpoint, s.endpointVar = v, "OTEL_EXPORTER_OTLP_ENDPOINT"
	}

	switch strings.ToLower(strings.TrimSpace(getenv(exporterVar))) {
	case "":
		// The contract: OTLP when an endpoint is configured, the embedded buffer otherwise.
		if s.endpoint == "" {
			return nil, ExporterEmbedded, nil
		}
	case "otlp":
	case "none":
		return nil, ExporterEmbedded, nil
	default:
		return nil, "", fmt.Errorf("%s: unsupported exporter; want otlp or none", exporterVar)
	}

	protocolVar, protocol := signalEnv(getenv, "PROTOCOL")
	var err error
	headersVar, headers := signalEnv(getenv, "HEADERS")
	if s.headers, err = parseHeaders(headersVar, headers); err != nil {
		return nil, "", err
	}
	insecureVar, insecure := signalEnv(getenv, "INSECURE")
	if s.insecure, err = parseBool(insecureVar, insecure); err != nil {
		return nil, "", err
	}
	compressionVar, compression := signalEnv(getenv, "COMPRESSION")
	switch strings.ToLower(strings.TrimSpace(compression)) {
	case "", "none":
	case "gzip":
		s.gzip = true
	default:
		return nil, "", fmt.Errorf("%s: unsupported compression; want gzip or none", compressionVar)
	}
	timeoutVar, timeout := signalEnv(getenv, "TIMEOUT")
	ms, err := parseNonNegativeInt(timeoutVar, timeout, 10000)
	if err != nil {
		return nil, "", err
	}
	s.timeout = time.Duration(ms) * time.Millisecond

	switch strings.ToLower(strings.TrimSpace(protocol)) {
	case "", "http/protobuf":
		exp, err := newOTLPHTTPExporter(ctx, s)
		return exp, ExporterOTLPHTTP, err
	case "grpc":
		exp, err := newOTLPGRPCExporter(ctx, s)
		return exp, ExporterOTLPGRPC, err
	}
	return nil, "", fmt.Errorf("%s: unsupported protocol; want http/protobuf or grpc", protocolVar)
}

func newOTLPHTTPExporter(ctx context.Context, s otlpSettings) (sdktrace.SpanExporter, error) {
	endpoint := s.endpoint
	switch {
	case endpoint == "":
		endpoint = "http://localhost:4318/v1/traces"
		s.endpointVar = "OTEL_EXPORTER_OTLP_ENDPOINT"
	case !s.signal:
		// The general variable is a base URL; the per-signal path is appended to it.
		endpoint = strings.TrimRight(endpoint, "/") + "/v1/traces"
	}
	if err := checkEndpointURL(s.endpointVar, endpoint); err != nil {
		return nil, err
	}
	compression := otlptracehttp.NoCompression
	if s.gzip {
		compression = otlptracehttp.GzipCompression
	}
	// For HTTP the URL scheme decides between http and https; OTEL_EXPORTER_OTLP_INSECURE only
	// applies to gRPC endpoints without a scheme.
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(endpoint),
		otlptracehttp.WithHeaders(s.headers),
		otlptracehttp.WithCompression(compression),
		otlptracehttp.WithTimeout(s.timeout),
	)
	if err != nil {
		return nil, fmt.Errorf("create OTLP/HTTP trace exporter: %w", err)
	}
	return exp, nil
}

func newOTLPGRPCExporter(ctx context.Context, s otlpSettings) (sdktrace.SpanExporter, error) {
	opts := []otlptracegrpc.Option{
		otlptracegrpc.WithHeaders(s.headers),
		otlptracegrpc.WithTimeout(s.timeout),
	}
	switch {
	case s.endpoint == "":
		opts = append(opts, otlptracegrpc.WithEndpointURL("http://localhost:4317"))
	case strings.Contains(s.endpoint, "://"):
		// A URL: its scheme decides TLS and its path is meaningless to gRPC.
		if err := checkEndpointURL(s.endpointVar, s.endpoint); err != nil {
			return nil, err
		}
		opts = append(opts, otlptracegrpc.WithEndpointURL(s.endpoint))
	default:
		// host:port, the form gRPC clients traditionally use; TLS unless INSECURE says not.
		opts = append(opts, otlptracegrpc.WithEndpoint(s.endpoint))
		if s.insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
	}
	if s.gzip {
		opts = append(opts, otlptracegrpc.WithCompressor("gzip"))
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("create OTLP/gRPC trace exporter: %w", err)
	}
	return exp, nil
}

// checkEndpointURL rejects what the exporters would otherwise silently replace with their
// default endpoint. The URL is not quoted: it may carry user info.
func checkEndpointURL(name, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: want an http:// or https:// URL with a host", name)
	}
	return nil
}

// signalEnv returns the traces-specific OTEL_EXPORTER_OTLP_TRACES_<suffix> when it is set and
// the general OTEL_EXPORTER_OTLP_<suffix> otherwise, with the name of the variable used.
func signalEnv(getenv func(string) string, suffix string) (name, value string) {
	name = "OTEL_EXPORTER_OTLP_TRACES_" + suffix
	if v := getenv(name); strings.TrimSpace(v) != "" {
		return name, v
	}
	name = "OTEL_EXPORTER_OTLP_" + suffix
	return name, getenv(name)
}

// batchOptions passes the OTEL_BSP_* settings explicitly; otherwise the SDK would read them from
// the process environment behind getenv's back.
func batchOptions(getenv func(string) string) ([]sdktrace.BatchSpanProcessorOption, error) {
	read := func(name string, def int) (int, error) { return parseNonNegativeInt(name, getenv(name), def) }
	delay, err := read("OTEL_BSP_SCHEDULE_DELAY", sdktrace.DefaultScheduleDelay)
	if err != nil {
		return nil, err
	}
	timeout, err := read("OTEL_BSP_EXPORT_TIMEOUT", sdktrace.DefaultExportTimeout)
	if err != nil {
		return nil, err
	}
	queue, err := read("OTEL_BSP_MAX_QUEUE_SIZE", sdktrace.DefaultMaxQueueSize)
	if err != nil {
		return nil, err
	}
	batch, err := read("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", sdktrace.DefaultMaxExportBatchSize)
	if err != nil {
		return nil, err
	}
	return []sdktrace.BatchSpanProcessorOption{
		sdktrace.WithBatchTimeout(time.Duration(delay) * time.Millisecond),
		sdktrace.WithExportTimeout(time.Duration(timeout) * time.Millisecond),
		sdktrace.WithMaxQueueSize(queue),
		sdktrace.WithMaxExportBatchSize(batch),
	}, nil
}

func envBool(getenv func(string) string, name string) (bool, error) {
	return parseBool(name, getenv(name))
}

// parseBool accepts true and false in any case; empty means false.
func parseBool(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("%s: want true or false", name)
}

func parseNonNegativeInt(name, v string, def int) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: want a non-negative integer", name)
	}
	return n, nil
}

func parseHeaders(name, v string) (map[string]string, error) {
	pairs, err := parseKeyValueList(name, v)
	if err != nil {
		return nil, err
	}
	// Always a non-nil map: passing it explicitly keeps the exporter from reading headers from
	// the process environment.
	h := make(map[string]string, len(pairs))
	for _, p := range pairs {
		h[p.key] = p.value
	}
	return h, nil
}

type keyValue struct{ key, value string }

// parseKeyValueList parses the specification's "k1=v1,k2=v2" format with percent-encoded
// values, used by OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS. Errors point at the
// entry by position, never by content, because header values are credentials.
func parseKeyValueList(name, v string) ([]keyValue, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []keyValue
	for i, entry := range strings.Split(v, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, val, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: entry %d is not key=value", name, i+1)
		}
		decoded, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d has an invalid percent-encoded value", name, i+1)
		}
		out = append(out, keyValue{key: k, value: decoded})
	}
	return out, nil
}
