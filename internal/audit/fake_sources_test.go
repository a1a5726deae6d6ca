package audit

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"testing"
	"time"

	"mockgateway/internal/promtext"
)

// fakeJaeger serves the fake target's spans through Jaeger's query API: /api/services, the v3
// trace lookup (OTLP JSON, with the caller's tracestate in traceState) and the v1 search (with
// the tracestate as the w3c.tracestate tag, as Jaeger's translator stores it).
func fakeJaeger(t *testing.T, f *fakeTarget) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/services", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"data":["mockgateway"],"total":1}`)
	})
	mux.HandleFunc("GET /api/v3/traces/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var spans []any
		for _, s := range f.spans {
			if s.TraceID != r.PathValue("id") {
				continue
			}
			var attrs []any
			for k, v := range s.Attrs {
				attrs = append(attrs, map[string]any{"key": k, "value": map[string]any{"stringValue": v}})
			}
			spans = append(spans, map[string]any{"traceId": s.TraceID, "spanId": s.SpanID, "name": s.Name, "traceState": s.TraceState, "attributes": attrs})
		}
		if len(spans) == 0 {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"httpCode":404,"message":"trace not found"}}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"resourceSpans": []any{map[string]any{
			"resource":   map[string]any{"attributes": []any{map[string]any{"key": "service.name", "value": map[string]any{"stringValue": "mockgateway"}}}},
			"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "mockgateway"}, "spans": spans}},
		}}}})
	})
	mux.HandleFunc("GET /api/traces", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var data []any
		for _, s := range f.spans {
			tags := []any{}
			for k, v := range s.Attrs {
				tags = append(tags, map[string]any{"key": k, "type": "string", "value": v})
			}
			if s.TraceState != "" {
				tags = append(tags, map[string]any{"key": "w3c.tracestate", "type": "string", "value": s.TraceState})
			}
			data = append(data, map[string]any{"traceID": s.TraceID, "spans": []any{map[string]any{"traceID": s.TraceID, "spanID": s.SpanID, "operationName": s.Name, "tags": tags, "processID": "p1"}},
				"processes": map[string]any{"p1": map[string]any{"serviceName": "mockgateway", "tags": []any{}}}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "total": len(data)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fakePrometheus is a Prometheus API that scrapes the target on every query, so what it stores
// is exactly what the target exposes.
func fakePrometheus(t *testing.T, target string) *httptest.Server {
	series := func() []map[string]string {
		resp, err := http.Get(target + "/metrics")
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		families, _ := promtext.Parse(resp.Body) // what parsed before a bad line, as a scrape keeps
		var out []map[string]string
		for name := range families {
			for _, m := range families[name].GetMetric() {
				v, _ := promtext.Value(m)
				ls := map[string]string{"__name__": name, "__value__": strconv.FormatFloat(v, 'f', -1, 64)}
				for _, l := range m.GetLabel() {
					ls[l.GetName()] = l.GetValue()
				}
				out = append(out, ls)
			}
		}
		return out
	}
	ok := func(w http.ResponseWriter, data any) {
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		sum, found := 0.0, false
		for _, s := range series() {
			if s["__name__"] == "mockgateway_http_requests_total" {
				v, _ := strconv.ParseFloat(s["__value__"], 64)
				sum += v
				found = true
			}
		}
		if !found {
			ok(w, map[string]any{"resultType": "vector", "result": []any{}})
			return
		}
		ok(w, map[string]any{"resultType": "vector", "result": []any{map[string]any{"metric": map[string]string{}, "value": []any{float64(time.Now().Unix()), strconv.FormatFloat(sum, 'f', -1, 64)}}}})
	})
	mux.HandleFunc("GET /api/v1/labels", func(w http.ResponseWriter, r *http.Request) {
		names := map[string]bool{}
		for _, s := range series() {
			for k := range s {
				if k != "__value__" {
					names[k] = true
				}
			}
		}
		var out []string
		for k := range names {
			out = append(out, k)
		}
		sort.Strings(out)
		ok(w, out)
	})
	mux.HandleFunc("GET /api/v1/label/{name}/values", func(w http.ResponseWriter, r *http.Request) {
		vals := map[string]bool{}
		for _, s := range series() {
			if v, has := s[r.PathValue("name")]; has {
				vals[v] = true
			}
		}
		out := []string{}
		for v := range vals {
			out = append(out, v)
		}
		sort.Strings(out)
		ok(w, out)
	})
	mux.HandleFunc("GET /api/v1/series", func(w http.ResponseWriter, r *http.Request) {
		var out []map[string]string
		for _, s := range series() {
			delete(s, "__value__")
			out = append(out, s)
		}
		ok(w, out)
	})
	mux.HandleFunc("GET /api/v1/query_exemplars", func(w http.ResponseWriter, r *http.Request) { ok(w, []any{}) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
