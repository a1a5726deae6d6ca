package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
)

// The hostile bodies must be what they claim: valid JSON, and under the default 1 MiB body limit
// unless the case raises it, or the case would only measure a 413.
func TestHostileBodies(t *testing.T) {
	for _, c := range append(hostileCases(), hostileCase{name: "maximal stream", body: maximalStream}) {
		if c.body == "" {
			continue
		}
		if !json.Valid([]byte(c.body)) {
			t.Errorf("%s: not valid JSON", c.name)
		}
		raised := slices.Contains(c.flags, "--max-body-bytes")
		if fits := len(c.body) < 1<<20; fits == raised {
			t.Errorf("%s: %d bytes, --max-body-bytes raised: %v", c.name, len(c.body), raised)
		}
	}
	if got := len(nested(3, 2, `{"type":"integer"}`)); got == 0 || !json.Valid([]byte(nested(3, 2, `{"type":"integer"}`))) {
		t.Errorf("nested: %d bytes, invalid", got)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"error":{"code":"context_length_exceeded"}}`, "400 context_length_exceeded, 44 B"},
		{200, `{"choices":[{"finish_reason":"length"},{"finish_reason":"stop"}]}`, "200 length ×2, 65 B"},
		{502, `oops`, "502, 4 B"},
	} {
		if got := describe(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("describe(%d, %s) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
	if got := tally([]string{"b", "a", "b"}); got != "1× a; 2× b" {
		t.Errorf("tally = %q", got)
	}
}

func TestRawRequest(t *testing.T) {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(rawRequest(smallRequest, "X-Mock-Latency: ttfc=0s;between=1s"))))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(req.Body)
	if string(b) != smallRequest || req.Header.Get("X-Mock-Latency") != "ttfc=0s;between=1s" {
		t.Errorf("body %q, header %q", b, req.Header.Get("X-Mock-Latency"))
	}
}
