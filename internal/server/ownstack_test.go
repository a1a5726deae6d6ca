package server

import (
	"net/http"
	"strings"
	"testing"

	"mockgateway/observability"
)

// TestOnOwnStack: f runs before onOwnStack returns, and a panic in f is raised again in the
// caller — where the handler's recovery can answer it, instead of ending the process — naming
// the place in f it happened, which the caller's stack no longer shows; net/http's
// ErrAbortHandler passes on as it is.
func TestOnOwnStack(t *testing.T) {
	ran := false
	onOwnStack(func() { ran = true })
	if !ran {
		t.Fatal("f had not run when onOwnStack returned")
	}
	raised := func(f func()) (p any) {
		defer func() { p = recover() }()
		onOwnStack(f)
		return nil
	}
	lp, ok := raised(func() { panic("deep") }).(observability.LocatedPanic)
	if !ok || lp.Value != "deep" || !strings.Contains(lp.Location, "ownstack_test.go") {
		t.Errorf("raised %#v, want the panic of f located in this file", lp)
	}
	if p := raised(func() { panic(http.ErrAbortHandler) }); p != http.ErrAbortHandler {
		t.Errorf("raised %#v, want http.ErrAbortHandler as it is", p)
	}
}
