package test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Stable datasource uids: dashboards, the exemplar link and bookmarks depend on them.
const (
	prometheusUID = "mockgateway-prometheus"
	jaegerUID     = "mockgateway-jaeger"
)

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestGrafanaDatasources(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(repoPath("deploy", "grafana", "provisioning", "datasources", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no datasource provisioning files")
	}
	type datasource struct {
		Name      string `yaml:"name"`
		UID       string `yaml:"uid"`
		Type      string `yaml:"type"`
		URL       string `yaml:"url"`
		IsDefault bool   `yaml:"isDefault"`
		JSONData  struct {
			ExemplarTraceIDDestinations []struct {
				Name          string `yaml:"name"`
				DatasourceUID string `yaml:"datasourceUid"`
			} `yaml:"exemplarTraceIdDestinations"`
		} `yaml:"jsonData"`
	}
	byUID := map[string]datasource{}
	for _, f := range files {
		var doc struct {
			APIVersion  int          `yaml:"apiVersion"`
			Datasources []datasource `yaml:"datasources"`
		}
		readYAML(t, f, &doc)
		if doc.APIVersion != 1 {
			t.Errorf("%s: apiVersion %d", f, doc.APIVersion)
		}
		for _, ds := range doc.Datasources {
			byUID[ds.UID] = ds
		}
	}
	prom, ok := byUID[prometheusUID]
	if !ok || prom.Type != "prometheus" || prom.URL != "http://prometheus:9090" || !prom.IsDefault {
		t.Errorf("Prometheus datasource %+v: want uid %s, type prometheus, url http://prometheus:9090, default", prom, prometheusUID)
	}
	jaeger, ok := byUID[jaegerUID]
	if !ok || jaeger.Type != "jaeger" || jaeger.URL != "http://jaeger:16686" {
		t.Errorf("Jaeger datasource %+v: want uid %s, type jaeger, url http://jaeger:16686", jaeger, jaegerUID)
	}
	// An exemplar's trace_id label (the key the service writes) opens the trace in Jaeger.
	dests := prom.JSONData.ExemplarTraceIDDestinations
	if len(dests) != 1 || dests[0].Name != "trace_id" || dests[0].DatasourceUID != jaegerUID {
		t.Errorf("exemplarTraceIdDestinations %+v: want trace_id -> %s", dests, jaegerUID)
	}
}

// dashboardProviderPath is the folder the Grafana file provider reads dashboards from.
func dashboardProviderPath(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(repoPath("deploy", "grafana", "provisioning", "dashboards", "*.yaml"))
	if len(files) != 1 {
		t.Fatalf("want one dashboard provisioning file, got %v", files)
	}
	var doc struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, files[0], &doc)
	if doc.APIVersion != 1 || len(doc.Providers) != 1 || doc.Providers[0].Type != "file" || doc.Providers[0].Options.Path == "" {
		t.Fatalf("%s: want one file provider with a path: %+v", files[0], doc)
	}
	return doc.Providers[0].Options.Path
}

func TestGrafanaDashboardProvider(t *testing.T) {
	t.Parallel()
	if p := dashboardProviderPath(t); !filepath.IsAbs(p) {
		t.Errorf("provider path %q must be absolute (a path inside the Grafana container)", p)
	}
}

// TestJaegerConfig checks the structure of the Jaeger v2 configuration: no Jaeger binary is
// available here to load it, so the wiring that the stack relies on is checked by hand.
func TestJaegerConfig(t *testing.T) {
	t.Parallel()
	var cfg struct {
		Service struct {
			Extensions []string `yaml:"extensions"`
			Pipelines  map[string]struct {
				Receivers  []string `yaml:"receivers"`
				Processors []string `yaml:"processors"`
				Exporters  []string `yaml:"exporters"`
			} `yaml:"pipelines"`
		} `yaml:"service"`
		Extensions map[string]yaml.Node `yaml:"extensions"`
		Receivers  struct {
			OTLP struct {
				Protocols struct {
					GRPC struct {
						Endpoint string `yaml:"endpoint"`
					} `yaml:"grpc"`
					HTTP struct {
						Endpoint string `yaml:"endpoint"`
					} `yaml:"http"`
				} `yaml:"protocols"`
			} `yaml:"otlp"`
		} `yaml:"receivers"`
		Processors map[string]yaml.Node `yaml:"processors"`
		Exporters  map[string]struct {
			TraceStorage string `yaml:"trace_storage"`
		} `yaml:"exporters"`
	}
	readYAML(t, repoPath("deploy", "jaeger", "config.yaml"), &cfg)

	traces, ok := cfg.Service.Pipelines["traces"]
	if !ok || !slices.Equal(traces.Receivers, []string{"otlp"}) {
		t.Fatalf("want a traces pipeline fed by the otlp receiver: %+v", cfg.Service.Pipelines)
	}
	for _, p := range traces.Processors {
		if _, ok := cfg.Processors[p]; !ok {
			t.Errorf("pipeline processor %s is not configured", p)
		}
	}
	for _, e := range cfg.Service.Extensions {
		if _, ok := cfg.Extensions[e]; !ok {
			t.Errorf("extension %s is enabled but not configured", e)
		}
	}
	for _, e := range []string{"jaeger_storage", "jaeger_query"} {
		if !slices.Contains(cfg.Service.Extensions, e) {
			t.Errorf("extension %s is not enabled", e)
		}
	}
	// The service sends OTLP/HTTP to jaeger:4318 across the compose network: the receiver must
	// not bind to the container's localhost (the collector's default).
	if cfg.Receivers.OTLP.Protocols.HTTP.Endpoint != "0.0.0.0:4318" || cfg.Receivers.OTLP.Protocols.GRPC.Endpoint != "0.0.0.0:4317" {
		t.Errorf("otlp receiver endpoints %+v: want 0.0.0.0:4318 (http) and 0.0.0.0:4317 (grpc)", cfg.Receivers.OTLP.Protocols)
	}

	// The exporter writes to the storage the query extension reads.
	var storage struct {
		Backends map[string]yaml.Node `yaml:"backends"`
	}
	var query struct {
		Storage struct {
			Traces string `yaml:"traces"`
		} `yaml:"storage"`
	}
	if n, ok := cfg.Extensions["jaeger_storage"]; !ok || n.Decode(&storage) != nil {
		t.Fatal("jaeger_storage is not configured")
	}
	if n, ok := cfg.Extensions["jaeger_query"]; !ok || n.Decode(&query) != nil {
		t.Fatal("jaeger_query is not configured")
	}
	if len(traces.Exporters) != 1 {
		t.Fatalf("want one exporter, got %v", traces.Exporters)
	}
	exp := cfg.Exporters[traces.Exporters[0]]
	if _, ok := storage.Backends[exp.TraceStorage]; !ok || exp.TraceStorage != query.Storage.Traces {
		t.Errorf("exporter writes to %q, query reads %q, backends %v: want one configured backend for both", exp.TraceStorage, query.Storage.Traces, storage.Backends)
	}
}
