package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// heavyAnswerBody asks for the largest JSON answer the default limits allow: n = 128 choices of
// a 64×64 object of strings of minLength 4096, each choice cut at its share of
// --max-response-bytes (4 MiB in all).
func heavyAnswerBody() string {
	leaf := `{"type":"string","minLength":4096}`
	for range 2 {
		props, names := make([]string, 64), make([]string, 64)
		for i := range props {
			props[i], names[i] = fmt.Sprintf(`"p%d":%s`, i, leaf), fmt.Sprintf(`"p%d"`, i)
		}
		leaf = `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(names, ",") + `]}`
	}
	return `{"model":"mock-chat","n":128,"messages":[{"role":"user","content":"hi"}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + leaf + `}}}`
}

// discardWriter is a ResponseWriter that counts and drops what is written, so that a benchmark
// measures the handler's memory and not a recorder's copy of the answer.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(status int)      { d.status = status }
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// BenchmarkHeavyAnswerMemory is the memory of the heaviest JSON answer: bytes allocated per
// request (B/op), beside the answer's own size (answer-MB).
// The answer's text is kept as one string and 4-byte piece ends (generate.Pieces), encoded into
// a buffer sized once (encodeBody), and dropped before the bytes are written (Result.DropText);
// what a request costs is then about its text and its encoding, not five copies of them.
func BenchmarkHeavyAnswerMemory(b *testing.B) {
	h := benchHandler(b, false)
	body := heavyAnswerBody()
	b.ReportAllocs()
	var out int
	for b.Loop() {
		req, _ := http.NewRequest("POST", chatPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := &discardWriter{h: http.Header{}}
		h.handler.ServeHTTP(w, req)
		if w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
		out = w.n
	}
	b.ReportMetric(float64(out)/(1<<20), "answer-MB")
}
