package observability

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// The OTLP exporter: which one the OTEL_EXPORTER_OTLP_* variables ask for, and its options,
// every one read through getenv and passed explicitly. The exporters would otherwise fill in
// what is not passed from the process environment, behind getenv's back.

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
	// tls holds the certificates the variables name (nil: none). Passed explicitly either way,
	// so that the exporters never read the certificate variables from the process environment.
	tls *tls.Config
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
	if s.tls, err = otlpTLS(getenv); err != nil {
		return nil, "", err
	}

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
	// applies to gRPC endpoints without a scheme. Over http the certificates are not used (the
	// exporter refuses a TLS configuration for a plaintext endpoint); passing nil then still
	// overrides what the exporter would read from the process environment.
	tlsConfig := s.tls
	if strings.HasPrefix(strings.ToLower(endpoint), "http://") {
		tlsConfig = nil
	}
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(endpoint),
		otlptracehttp.WithHeaders(s.headers),
		otlptracehttp.WithCompression(compression),
		otlptracehttp.WithTimeout(s.timeout),
		otlptracehttp.WithTLSClientConfig(tlsConfig),
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
	plaintext := s.insecure
	switch {
	case s.endpoint == "":
		opts = append(opts, otlptracegrpc.WithEndpointURL("http://localhost:4317"))
		plaintext = true
	case strings.Contains(s.endpoint, "://"):
		// A URL: its scheme decides TLS and its path is meaningless to gRPC.
		if err := checkEndpointURL(s.endpointVar, s.endpoint); err != nil {
			return nil, err
		}
		opts = append(opts, otlptracegrpc.WithEndpointURL(s.endpoint))
		plaintext = strings.HasPrefix(strings.ToLower(s.endpoint), "http://")
	default:
		// host:port, the form gRPC clients traditionally use; TLS unless INSECURE says not.
		opts = append(opts, otlptracegrpc.WithEndpoint(s.endpoint))
	}
	// The transport credentials are always passed: the exporter gives credentials it read from
	// the process environment's certificate variables precedence over a plaintext endpoint.
	if plaintext {
		opts = append(opts, otlptracegrpc.WithInsecure(), otlptracegrpc.WithTLSCredentials(insecure.NewCredentials()))
	} else {
		opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(s.tls)))
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

// otlpTLS builds the TLS client configuration from OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE (the
// CA that verifies the collector) and OTEL_EXPORTER_OTLP_[TRACES_]CLIENT_CERTIFICATE and
// _CLIENT_KEY (the client's own certificate, for mutual TLS), or nil when none is set. The
// client certificate and its key are one setting: both from the traces-specific pair when either
// of it is set, else both from the general pair. Unlike the exporters, which log and ignore a
// certificate they cannot load, it fails: an export that cannot verify its collector would fail
// on every batch. Errors name the variable, not the file.
func otlpTLS(getenv func(string) string) (*tls.Config, error) {
	var cfg tls.Config
	set := false
	if name, path := signalEnv(getenv, "CERTIFICATE"); strings.TrimSpace(path) != "" {
		pem, err := readSetting(name, path)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: the file holds no PEM certificate", name)
		}
		cfg.RootCAs, set = pool, true
	}
	certVar, keyVar := "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"
	if strings.TrimSpace(getenv(certVar)) == "" && strings.TrimSpace(getenv(keyVar)) == "" {
		certVar, keyVar = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_KEY"
	}
	certPath, keyPath := strings.TrimSpace(getenv(certVar)), strings.TrimSpace(getenv(keyVar))
	switch {
	case certPath == "" && keyPath == "":
	case certPath == "":
		return nil, fmt.Errorf("%s: set without %s", keyVar, certVar)
	case keyPath == "":
		return nil, fmt.Errorf("%s: set without %s", certVar, keyVar)
	default:
		certPEM, err := readSetting(certVar, certPath)
		if err != nil {
			return nil, err
		}
		keyPEM, err := readSetting(keyVar, keyPath)
		if err != nil {
			return nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The parser's message describes the PEM's structure, never its content.
			return nil, fmt.Errorf("%s, %s: not a certificate and its key: %w", certVar, keyVar, err)
		}
		cfg.Certificates, set = []tls.Certificate{cert}, true
	}
	if !set {
		return nil, nil
	}
	return &cfg, nil
}

// readSetting reads the file a variable names. The error names the variable and the cause, not
// the path.
func readSetting(name, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot read the file: %w", name, err)
	}
	return b, nil
}
