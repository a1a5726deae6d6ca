package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"mockgateway/internal/apierr"
)

// requireKey enforces the optional local key on /v1. Off when key is empty: clients send a dummy
// key and any value, or none, is accepted.
func requireKey(key string, next http.Handler) http.Handler {
	if key == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkKey(key, r); err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
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

// rejectWhileDraining answers new /v1 work with 503 shutting_down once shutdown has begun;
// requests already in flight finish.
func rejectWhileDraining(d *Drain, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.Draining() {
			w.Header().Set("Retry-After", "1")
			writeError(w, r, apierr.New(apierr.ShuttingDown, "", "The mock gateway is shutting down and takes no new requests."))
			return
		}
		next.ServeHTTP(w, r)
	})
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

func (l *concurrencyLimit) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case l.slots <- struct{}{}:
			defer func() { <-l.slots }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			writeError(w, r, l.busy)
		}
	})
}
