package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"mockgateway/internal/apierr"
	"mockgateway/internal/state"
)

// TestJournalFlushReadsBusy: a read of the unscoped journal beyond --journal-flush-reads is
// 429 server_busy with retry-after, as a /v1 request beyond --max-concurrent is — not a 503
// that would say the store is down.
func TestJournalFlushReadsBusy(t *testing.T) {
	e := stateError(fmt.Errorf("read: %w", state.ErrBusy))
	if e.Code != apierr.ServerBusy || e.Status != http.StatusTooManyRequests {
		t.Fatalf("%+v, want 429 server_busy", e)
	}
	w := httptest.NewRecorder()
	writeError(w, httptest.NewRequest("GET", "/_mock/journal", nil), e)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("%d, retry-after %q", w.Code, w.Header().Get("Retry-After"))
	}
}
