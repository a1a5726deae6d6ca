package observability

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
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
	// Tracer is what the service starts its spans with: the buffer's own (bufferTracer) when
	// the spans go nowhere else, the Provider's when they are exported too.
	Tracer   trace.Tracer
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
		t.Tracer = t.Provider.Tracer(tracerName)
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
	t.Tracer = t.Provider.Tracer(tracerName)
	if exp == nil {
		// Only the embedded buffer: its own tracer writes the same records for a fraction of
		// the SDK span's cost (bufferTracer).
		t.Tracer = newBufferTracer(t.Buffer, sampler)
	}
	return t, nil
}

// tracerName is the instrumentation scope of the service's spans.
const tracerName = "mockgateway"

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
