package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"mockgateway/internal/apierr"
)

// v1Guard runs the checks every /v1 request passes before its handler, in this order: the
// optional local key (401 before any other error; off when the key is empty, so clients may send
// any dummy key or none), then the drain (503 shutting_down once shutdown has begun; requests
// already in flight finish), then the concurrency limit (429 server_busy). One handler rather
// than three nested ones keeps the stack a parked stream holds short.
type v1Guard struct {
	key   string
	drain *Drain
	limit *concurrencyLimit
	next  http.Handler
}

func (g *v1Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.key != "" {
		if err := checkKey(g.key, r); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if g.drain.Draining() {
		w.Header().Set("Retry-After", "1")
		writeError(w, r, apierr.New(apierr.ShuttingDown, "", "The mock gateway is shutting down and takes no new requests."))
		return
	}
	if !g.limit.acquire() {
		writeError(w, r, g.limit.busy) // writeError gives every 429 a Retry-After
		return
	}
	defer g.limit.release()
	g.next.ServeHTTP(w, r)
}

// checkKey compares digests in constant time, so neither the key's bytes nor its length can be
// learned from response timing.
func checkKey(key string, r *http.Request) *apierr.Error {
	h := r.Header.Get("Authorization")
	if h == "" {
		return apierr.New(apierr.MissingAPIKey, "", "This mock requires a local API key: send 'Authorization: Bearer <key>' with the key it was started with.")
	}
	token, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		token, ok = strings.CutPrefix(h, "bearer ")
	}
	want := sha256.Sum256([]byte(key))
	got := sha256.Sum256([]byte(token))
	if !ok || subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		return apierr.New(apierr.InvalidAPIKey, "", "Incorrect local API key provided. Use the key the mock was started with (--api-key or MOCKGATEWAY_API_KEY).")
	}
	return nil
}

// concurrencyLimit bounds the /v1 requests served at once. Beyond the limit it answers 429 at
// once rather than queueing: a client under test should see backpressure, not latency.
type concurrencyLimit struct {
	slots chan struct{}
	busy  *apierr.Error
}

func newConcurrencyLimit(limit int) *concurrencyLimit {
	return &concurrencyLimit{
		slots: make(chan struct{}, limit),
		busy:  apierr.New(apierr.ServerBusy, "", "The mock gateway is serving its maximum number of concurrent requests; retry after the time in the retry-after header."),
	}
}

// acquire takes a slot if one is free; it never waits.
func (l *concurrencyLimit) acquire() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (l *concurrencyLimit) release() { <-l.slots }
