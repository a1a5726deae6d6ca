package server

import (
	"strconv"
	"testing"

	"mockgateway/internal/catalog"
	"mockgateway/internal/quota"
)

// benchQuotaLimit is a limit no benchmark reaches (10^12, within quota's bound): every request
// draws on its buckets and settles them, none is refused.
const benchQuotaLimit = "1000000000000"

// quotaBenchCatalog is benchHandler's model three times over: as it is (no limits), with limits
// no benchmark reaches, and with a capacity no benchmark fills.
const quotaBenchCatalog = `models:
  - {id: mock-chat, kind: mock, behavior: chat, default_tokens: 64, capabilities: {streaming: true, tools: false}}
  - {id: mock-limited, kind: mock, behavior: chat, default_tokens: 64, capabilities: {streaming: true, tools: false}, limits: {rpm: ` + benchQuotaLimit + `, tpm: ` + benchQuotaLimit + `, rpd: ` + benchQuotaLimit + `}}
  - {id: mock-capacity, kind: mock, behavior: chat, default_tokens: 64, capabilities: {streaming: true, tools: false}, capacity: 1000000}
`

func quotaBenchHandler(b testing.TB) *harness {
	b.Helper()
	cat, err := catalog.Parse([]byte(quotaBenchCatalog))
	if err != nil {
		b.Fatal(err)
	}
	return benchChain(b, cat, true)
}

// BenchmarkChatJSONLimited is BenchmarkChatJSON's request (telemetry on, the buckets in memory)
// to a model without limits, to the same model with limits in the catalog, with limits in an
// x-mock-quota header (parsed per request), and with a capacity: the difference per op against
// limits=none is what a quota, or a load gate, costs a request. None of them is ever refused.
func BenchmarkChatJSONLimited(b *testing.B) {
	header := map[string]string{quota.Header: "rpm=" + benchQuotaLimit + ";tpm=" + benchQuotaLimit + ";rpd=" + benchQuotaLimit}
	for _, c := range []struct {
		name, model string
		header      map[string]string
	}{
		{"limits=none", "mock-chat", nil},
		{"limits=catalog", "mock-limited", nil},
		{"limits=header", "mock-chat", header},
		{"capacity", "mock-capacity", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchSend(b, quotaBenchHandler(b), "POST", chatPath, chatBody(c.model, ""), c.header, 200)
		})
	}
}

// BenchmarkChatStream64Limited is the same for BenchmarkChatStream64's stream: a stream settles
// its tokens once it ends.
func BenchmarkChatStream64Limited(b *testing.B) {
	for _, c := range []struct{ name, model string }{{"limits=none", "mock-chat"}, {"limits=catalog", "mock-limited"}} {
		b.Run(c.name, func(b *testing.B) {
			benchSend(b, quotaBenchHandler(b), "POST", chatPath, chatBody(c.model, `"stream":true`), nil, 200)
		})
	}
}

// TestQuotaBenchDraws holds the benchmarks above to what they claim: the limited requests draw
// on their buckets (their answers carry the limits, and what remains is below them: so large a
// bucket refills faster than requests come, so it does not go lower) and the others on none.
func TestQuotaBenchDraws(t *testing.T) {
	cat, err := catalog.Parse([]byte(quotaBenchCatalog))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) { d.Catalog = cat })
	limit, _ := strconv.ParseInt(benchQuotaLimit, 10, 64)
	q := "rpm=" + benchQuotaLimit + ";tpm=" + benchQuotaLimit + ";rpd=" + benchQuotaLimit
	for _, c := range []struct {
		model   string
		header  []string
		limited bool
	}{{"mock-chat", nil, false}, {"mock-limited", nil, true}, {"mock-chat", []string{quota.Header, q}, true}, {"mock-capacity", nil, false}} {
		rr := h.do("POST", chatPath, chatBody(c.model, ""), c.header...)
		if rr.Code != 200 {
			t.Fatalf("%s %v: %d %s", c.model, c.header, rr.Code, rr.Body)
		}
		if got := rr.Header().Get("X-Ratelimit-Limit-Requests"); (got == benchQuotaLimit) != c.limited {
			t.Errorf("%s %v: x-ratelimit-limit-requests %q, limited %v", c.model, c.header, got, c.limited)
		}
		if !c.limited {
			continue
		}
		for _, name := range []string{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Remaining-Tokens"} {
			if r, err := strconv.ParseInt(rr.Header().Get(name), 10, 64); err != nil || r >= limit {
				t.Errorf("%s %v: %s %q: not drawn", c.model, c.header, name, rr.Header().Get(name))
			}
		}
	}
}
