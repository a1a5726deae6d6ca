package observability

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// testCert is a self-signed certificate for 127.0.0.1, its own CA, written as PEM files.
type testCert struct {
	cert              tls.Certificate
	pool              *x509.CertPool
	certFile, keyFile string
}

func newTestCert(t *testing.T, name string) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := testCert{pool: x509.NewCertPool()}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if c.cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	c.pool.AppendCertsFromPEM(certPEM)
	dir := t.TempDir()
	c.certFile, c.keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(c.certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTracingExportsOTLPOverHTTPS: the collector's CA named only through getenv verifies it —
// the general variable, and the per-signal ones with a client certificate the collector
// requires (mutual TLS).
func TestTracingExportsOTLPOverHTTPS(t *testing.T) {
	serverCert, clientCert := newTestCert(t, "collector"), newTestCert(t, "client")
	for _, tc := range []struct {
		name   string
		mutual bool
		env    map[string]string
	}{
		{"ca", false, map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": serverCert.certFile}},
		{"traces-ca-and-client", true, map[string]string{
			"OTEL_EXPORTER_OTLP_CERTIFICATE":               clientCert.certFile, // the wrong CA: the per-signal one wins
			"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE":        serverCert.certFile,
			"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": clientCert.certFile,
			"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY":         clientCert.keyFile,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recv := &otlpReceiver{}
			srv := httptest.NewUnstartedServer(recv)
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert.cert}}
			if tc.mutual {
				srv.TLS.ClientAuth, srv.TLS.ClientCAs = tls.RequireAndVerifyClientCert, clientCert.pool
			}
			srv.StartTLS()
			defer srv.Close()

			tc.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = srv.URL
			tc.env["OTEL_EXPORTER_OTLP_HEADERS"] = "api-key=abc%20def"
			tr, err := NewTracing(context.Background(), fakeEnv(tc.env), testTracingConfig)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(srv.URL, "https://") || tr.Exporter != ExporterOTLPHTTP {
				t.Fatalf("%s over %s", tr.Exporter, srv.URL)
			}
			exportAndCheck(t, tr, recv)
		})
	}
}

// TestTracingExportsOTLPOverGRPCWithTLS: the same over gRPC, mutual TLS, general variables.
func TestTracingExportsOTLPOverGRPCWithTLS(t *testing.T) {
	serverCert, clientCert := newTestCert(t, "collector"), newTestCert(t, "client")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	recv := &otlpReceiver{}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{serverCert.cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clientCert.pool,
	})))
	coltracepb.RegisterTraceServiceServer(srv, recv)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	for _, endpoint := range []string{"https://" + lis.Addr().String(), lis.Addr().String()} {
		tr, err := NewTracing(context.Background(), fakeEnv(map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":           endpoint,
			"OTEL_EXPORTER_OTLP_PROTOCOL":           "grpc",
			"OTEL_EXPORTER_OTLP_HEADERS":            "api-key=abc%20def",
			"OTEL_EXPORTER_OTLP_CERTIFICATE":        serverCert.certFile,
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": clientCert.certFile,
			"OTEL_EXPORTER_OTLP_CLIENT_KEY":         clientCert.keyFile,
		}), testTracingConfig)
		if err != nil {
			t.Fatal(err)
		}
		recv.mu.Lock()
		recv.requests, recv.apiKeys = nil, nil
		recv.mu.Unlock()
		exportAndCheck(t, tr, recv)
	}
}

// TestTracingIgnoresProcessCertificates: certificate variables in the process environment but
// not in getenv are not used — here they would make the exporter refuse its plaintext endpoint.
func TestTracingIgnoresProcessCertificates(t *testing.T) {
	c := newTestCert(t, "stray")
	for _, suffix := range []string{"CERTIFICATE", "CLIENT_CERTIFICATE", "TRACES_CERTIFICATE"} {
		t.Setenv("OTEL_EXPORTER_OTLP_"+suffix, c.certFile)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", c.keyFile)

	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	tr, err := NewTracing(context.Background(), fakeEnv(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "api-key=abc%20def",
	}), testTracingConfig)
	if err != nil {
		t.Fatal(err)
	}
	exportAndCheck(t, tr, recv)

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grecv := &otlpReceiver{}
	gsrv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gsrv, grecv)
	go func() { _ = gsrv.Serve(lis) }()
	defer gsrv.Stop()
	tr, err = NewTracing(context.Background(), fakeEnv(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + lis.Addr().String(),
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_HEADERS":  "api-key=abc%20def",
	}), testTracingConfig)
	if err != nil {
		t.Fatal(err)
	}
	exportAndCheck(t, tr, grecv)
}

// TestTracingRejectsBadCertificates: a certificate setting that cannot be loaded fails at start,
// naming the variable but not the file.
func TestTracingRejectsBadCertificates(t *testing.T) {
	c := newTestCert(t, "c")
	missing := filepath.Join(t.TempDir(), envCanary+".pem")
	const endpoint = "https://127.0.0.1:1"
	for _, tc := range []struct {
		variable string
		env      map[string]string
	}{
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": missing}},
		{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": c.keyFile}},
		{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": c.certFile}},
		{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": c.certFile, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": c.keyFile}},
		{"OTEL_EXPORTER_OTLP_CLIENT_KEY", map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": c.certFile, "OTEL_EXPORTER_OTLP_CLIENT_KEY": missing}},
		{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": c.keyFile, "OTEL_EXPORTER_OTLP_CLIENT_KEY": c.keyFile}},
	} {
		for _, protocol := range []string{"http/protobuf", "grpc"} {
			tc.env["OTEL_EXPORTER_OTLP_ENDPOINT"], tc.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = endpoint, protocol
			_, err := NewTracing(context.Background(), fakeEnv(tc.env), testTracingConfig)
			if err == nil {
				t.Errorf("%v: NewTracing succeeded, want an error", tc.env)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, tc.variable+":") && !strings.Contains(msg, tc.variable+",") {
				t.Errorf("%v: error %q does not name %s", tc.env, msg, tc.variable)
			} else if strings.Contains(msg, envCanary) || strings.Contains(msg, filepath.Dir(c.certFile)) {
				t.Errorf("%v: error %q names the file", tc.env, msg)
			}
		}
	}
}
