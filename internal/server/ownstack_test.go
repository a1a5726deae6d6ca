package server

import "testing"

// TestOnOwnStack: f runs before onOwnStack returns, and a panic in f is raised again in the
// caller, where the handler's recovery can answer it, instead of ending the process.
func TestOnOwnStack(t *testing.T) {
	ran := false
	onOwnStack(func() { ran = true })
	if !ran {
		t.Fatal("f had not run when onOwnStack returned")
	}
	defer func() {
		if p := recover(); p != "deep" {
			t.Errorf("recovered %v, want the panic of f", p)
		}
	}()
	onOwnStack(func() { panic("deep") })
	t.Error("onOwnStack returned after f panicked")
}
