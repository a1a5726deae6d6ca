package main

import (
	"bytes"
	"testing"
)

// TestSwitchesStartTheService: the boolean flags, written bare as the docs write them, start the
// service and take effect — and --allow-simulation-headers, on by default, turns off with =false.
// They once failed start-up with "flag needs an argument".
func TestSwitchesStartTheService(t *testing.T) {
	body := chatBody("mock-echo", "hello", false)
	strict := startService(t, nil, "--fixtures-strict", "--trace-probes")
	if status, _, answer := call(t, strict.URL, nil, body); status != 400 || !bytes.Contains(answer, []byte(`"no_fixture_match"`)) {
		t.Errorf("--fixtures-strict: %d %s, want 400 no_fixture_match", status, answer)
	}
	fault := map[string]string{"x-mock-fault": "rate_limit"}
	if status, _, answer := call(t, startService(t, nil).URL, fault, body); status != 429 {
		t.Errorf("by default x-mock-fault is read: %d %s, want 429", status, answer)
	}
	off := startService(t, nil, "--allow-simulation-headers=false")
	if status, _, answer := call(t, off.URL, fault, body); status != 200 {
		t.Errorf("--allow-simulation-headers=false: %d %s, want 200 (the header ignored)", status, answer)
	}
}
