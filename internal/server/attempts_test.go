package server

import (
	"mockgateway/internal/state"
	"net/http"
	"testing"
)

// TestAttemptsCountedForClientsThatDoNotSay: "fail the first K attempts" recovers for clients
// that retry without an attempt header (or, as LangChain JS does, with x-stainless-retry-count
// 0 on every retry), counted by the request; an attempt that gets through forgets it, so the
// next identical request is a first try again.
func TestAttemptsCountedForClientsThatDoNotSay(t *testing.T) {
	const fault = "rate_limit;attempts=2;retry_after=0s"
	body := chatBody("mock-chat", "")
	for _, tt := range []struct {
		name   string
		header []string
		want   []int
	}{
		{"no attempt header", []string{"X-Mock-Fault", fault}, []int{429, 429, 200, 429, 429, 200}},
		{"retry count always 0", []string{"X-Mock-Fault", fault, "X-Stainless-Retry-Count", "0"}, []int{429, 429, 200, 429}},
		{"x-mock-attempt pins the attempt", []string{"X-Mock-Fault", fault, "X-Mock-Attempt", "1"}, []int{429, 429, 429, 429}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			for i, want := range tt.want {
				if rr := h.do("POST", chatPath, body, tt.header...); rr.Code != want {
					t.Fatalf("attempt %d: status %d, want %d: %s", i+1, rr.Code, want, rr.Body)
				}
			}
			if n := h.deps.State.(*state.Memory).Attempts.Len(); n > 1 {
				t.Errorf("%d keys kept for one request", n)
			}
		})
	}
}

// TestAttemptsOfAnSDKThatCounts: an official SDK's retries (x-stainless-retry-count 0, 1, 2)
// are taken at their word, and the success forgets the first try's key, so the SDK's next call
// fails again from its first attempt.
func TestAttemptsOfAnSDKThatCounts(t *testing.T) {
	h := newHarness(t)
	body := chatBody("mock-chat", "")
	for round := range 2 {
		for retry, want := range []int{429, 429, 200} {
			rr := h.do("POST", chatPath, body, "X-Mock-Fault", "rate_limit;attempts=2", "X-Stainless-Retry-Count", string(rune('0'+retry)))
			if rr.Code != want {
				t.Fatalf("round %d retry %d: status %d, want %d", round, retry, rr.Code, want)
			}
		}
	}
	if n := h.deps.State.(*state.Memory).Attempts.Len(); n != 0 {
		t.Errorf("%d keys kept after the request got through", n)
	}
}

// TestAttemptsKeyedByRequest: different bodies, models or fault headers are different requests;
// with --attempt-keys 0 nothing is counted and every try is a first one.
func TestAttemptsKeyedByRequest(t *testing.T) {
	h := newHarness(t)
	const fault = "unavailable;attempts=1;retry_after=0s"
	a, b := chatBody("mock-chat", ""), chatBody("mock-chat", `"temperature":0.5`)
	steps := []struct {
		body, fault string
		want        int
	}{
		{a, fault, 503}, {b, fault, 503}, {a, "unavailable;attempts=1;retry_after=1s", 503}, {a, fault, 200}, {b, fault, 200},
	}
	for i, s := range steps {
		if rr := h.do("POST", chatPath, s.body, "X-Mock-Fault", s.fault); rr.Code != s.want {
			t.Fatalf("step %d: status %d, want %d: %s", i, rr.Code, s.want, rr.Body)
		}
	}
	off := newHarness(t, func(d *Deps) { d.Config.AttemptKeys = 0 })
	for i := range 3 {
		if rr := off.do("POST", chatPath, a, "X-Mock-Fault", fault); rr.Code != http.StatusServiceUnavailable {
			t.Fatalf("counting off, try %d: status %d", i+1, rr.Code)
		}
	}
}
