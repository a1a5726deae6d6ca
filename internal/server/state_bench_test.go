package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"mockgateway/internal/testutil"
)

// BenchmarkStateStore compares a JSON chat request with the runtime state in memory and in a
// Redis the benchmark starts (--state-store), telemetry and the journal on: unscoped, the
// request needs no shared state (no round trip; its journal entry is queued), and in a scope
// with a runtime fixture it reads the scope's generation, counts the match and writes its
// journal entry before answering (three round trips). docs/performance.md has the ratios.
func BenchmarkStateStore(b *testing.B) {
	rs := testutil.StartRedis(b)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	// The store's metrics: dropped/op says whether the journal's writer kept up. An entry it
	// drops is work it did not do, which would flatter the store's figures.
	reg := prometheus.NewRegistry()
	dropped := func() float64 {
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() == "mockgateway_journal_dropped_total" {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		return 0
	}
	shared := func(d *Deps) {
		d.Config.StateStore = rs.URL()
		s, err := NewSharedState(ctx, d.Config, NewFixtureStore(d.Config), reg, d.Logger)
		if err != nil {
			b.Fatal(err)
		}
		d.State = s
	}
	body := chatBody("mock-chat", "")
	scope := []string{"X-Mock-Scope", "bench-1"}
	fixture := `{"fixtures":[{"name":"answer","reply":{"content":"A fixture's answer."}}]}`
	for _, v := range []struct {
		name string
		opts []func(*Deps)
	}{{"memory", nil}, {"redis", []func(*Deps){shared}}} {
		h := benchHandler(b, true, v.opts...)
		if code := serveOnce(h, "/_mock/fixtures", fixture, scope); code != 200 {
			b.Fatalf("add: %d", code)
		}
		b.Run("unscoped/"+v.name, func(b *testing.B) {
			before := dropped()
			benchRequest(b, h, body)
			b.ReportMetric((dropped()-before)/float64(b.N), "dropped/op")
		})
		b.Run("scoped/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				if code := serveOnce(h, chatPath, body, scope); code != 200 {
					b.Fatalf("scoped request: %d", code)
				}
			}
		})
	}
}

func serveOnce(h *harness, path, body string, header []string) int {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(header[0], header[1])
	rr := httptest.NewRecorder()
	h.handler.ServeHTTP(rr, req)
	return rr.Code
}
