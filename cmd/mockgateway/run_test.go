package main

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestRunServesAndStops(t *testing.T) {
	in := startService(t, nil)
	resp, err := http.Get(in.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Fatalf("health: %d %s", resp.StatusCode, body)
	}
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestHealthcheckSubcommand(t *testing.T) {
	in := startService(t, nil)
	addr := strings.TrimPrefix(in.URL, "http://")
	if err := run(t.Context(), []string{"healthcheck", "--addr", addr}, func(string) string { return "" }, io.Discard, io.Discard); err != nil {
		t.Fatalf("healthy service: %v", err)
	}
	port := addr[strings.LastIndex(addr, ":"):]
	if err := run(t.Context(), []string{"healthcheck"}, func(k string) string {
		if k == "MOCKGATEWAY_ADDR" {
			return "0.0.0.0" + port
		}
		return ""
	}, io.Discard, io.Discard); err != nil {
		t.Fatalf("0.0.0.0 address: %v", err)
	}
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"healthcheck", "--addr", addr}, func(string) string { return "" }, io.Discard, io.Discard); err == nil {
		t.Fatal("healthcheck passed against a stopped service")
	}
}

func TestVersionAndHelp(t *testing.T) {
	var out, errOut strings.Builder
	if err := run(t.Context(), []string{"--version"}, func(string) string { return "" }, &out, &errOut); err != nil || out.String() != "mockgateway 4.2.0 (Gateway Foundation)\n" {
		t.Errorf("--version: %v %q", err, out.String())
	}
	if err := run(t.Context(), []string{"--help"}, func(string) string { return "" }, &out, &errOut); err != nil || !strings.Contains(errOut.String(), "--catalog") {
		t.Errorf("--help: %v %q", err, errOut.String())
	}
}

func TestBadCatalogStopsStartup(t *testing.T) {
	p := t.TempDir() + "/bad.yaml"
	if err := os.WriteFile(p, []byte("models:\n  - {id: a, kind: mock}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"--catalog", p, "--addr", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "models[0] (a)") || !strings.Contains(err.Error(), "behavior is missing") {
		t.Errorf("bad catalog: %v", err)
	}
}
