package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// v1Guard runs the checks every /v1 request passes before its handler, in this order: the
// optional local key (401 before any other error; off when the key is empty, so clients may send
// any dummy key or none), then — for a handler that takes a body (see takesBody) — reading the
// body, then the drain (503 shutting_down once shutdown has begun; requests already in flight
// finish), then the concurrency limit (429 server_busy). A slot is taken only once the body is
// in: a client trickling its body holds a connection until the read timeout (408), never a slot
// that others are refused for. During the drain a body is still read before the 503, so that a
// client still sending it gets the answer rather than a reset.
//
// One handler rather than nested ones keeps the stack a parked stream holds short; the body is
// read in a call of its own, whose frames are gone by the time the handler runs.
type v1Guard struct {
	key     string
	drain   *Drain
	limit   *concurrencyLimit
	journal state.Store // nil: no journal
	next    http.Handler
}

func (g *v1Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := observability.RecordFrom(r.Context())
	var note *callNote
	if g.journal != nil {
		// Every /v1 call is journaled once answered, refusals included; the handlers add the
		// request's shape to its note.
		note = &callNote{j: g.journal, r: r, rec: rec}
		rec.Note = note
		defer note.file()
	}
	if g.key != "" {
		if err := checkKey(g.key, r); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if err := readScope(r, rec); err != nil {
		writeError(w, r, err)
		return
	}
	next := g.next
	if b, ok := next.(*takesBody); ok {
		if err := readBody(w, r, b.maxBody); err != nil {
			writeError(w, r, err)
			return
		}
		next = b.next // the body is read: straight to the handler, one frame fewer
	}
	if g.drain.Draining() {
		dropBody(r)
		w.Header().Set("Retry-After", "1")
		writeError(w, r, apierr.New(apierr.ShuttingDown, "", "The mock gateway is shutting down and takes no new requests."))
		return
	}
	if !g.limit.acquire() {
		dropBody(r)
		writeError(w, r, g.limit.busy) // writeError gives every 429 a Retry-After
		return
	}
	defer g.limit.release()
	if note != nil && rec.Scope != "" {
		note.serveEntryFirst(next, w)
		return
	}
	next.ServeHTTP(w, r)
}

// checkKey compares digests in constant time, so neither the key's bytes nor its length can be
// learned from response timing.
//
// Besides Authorization, the key is read where the request's dialect has its clients put it
// (dialect.Dialect's Key: Anthropic's x-api-key, Google's x-goog-api-key or key query
// parameter), and only there: an OpenAI client's stray x-api-key is not its key.
func checkKey(key string, r *http.Request) *apierr.Error {
	h := r.Header.Get("Authorization")
	if h == "" {
		if k := dialectOf(observability.RecordFrom(r.Context())).Key(r); k != "" {
			h = "Bearer " + k
		}
	}
	if h == "" {
		return apierr.New(apierr.MissingAPIKey, "", "This mock requires a local API key: send 'Authorization: Bearer <key>' (or x-api-key) with the key it was started with.")
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

// takesBody marks a handler whose request carries a JSON body of at most maxBody bytes: v1Guard
// reads the body (readBody) before the request takes a concurrency slot, and the handler takes
// it with takeBody.
type takesBody struct {
	maxBody int64
	next    http.Handler
}

func (b *takesBody) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.next.ServeHTTP(w, r) }

// drainOversized is how far past --max-body-bytes a declared body is still read before the 413.
const drainOversized = 4 << 20

// readBody applies the checks a JSON body passes before it is parsed, in the contract's order —
// media type (415), size (413), then whether it arrived within the read timeout (408) — and
// replaces r.Body with the bytes read (a *bodyRead). Once it has returned the body is in memory
// or the request has been refused; nothing waits on the client any more.
//
//go:noinline
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64) error {
	if !jsonContentType(r.Header.Get("Content-Type")) {
		return apierr.New(apierr.UnsupportedMediaType, "", "Send the request body as JSON with 'Content-Type: application/json'.")
	}
	if r.ContentLength > maxBody {
		// A body somewhat over the limit is read and dropped before the 413: a client still
		// writing it when the connection closes would get a reset instead of the answer, and
		// SDKs retry resets. Far over the limit it is not worth reading; the read timeout bounds
		// this either way.
		if r.ContentLength <= maxBody+drainOversized {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return tooLarge(maxBody)
	}
	buf := getBuffer()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		putBuffer(buf)
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return tooLarge(maxBody)
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The server's read deadline (--read-timeout) passed with the body still coming.
			return apierr.New(apierr.RequestTimeout, "", "The request body did not arrive within this mock's read timeout (--read-timeout); send it at once, not in a trickle.")
		}
		return apierr.New(apierr.InvalidJSON, "", "The request body could not be read completely.")
	}
	// The body is in. Closed now, net/http does not go on to drain it when the response starts
	// (an 8 KB pooled copy, on a stream from deep in the stack a parked stream keeps).
	_ = r.Body.Close()
	// The server's read deadline (--read-timeout) guarded reading it; left in place it would
	// also fire in net/http's background read during a long stream or a stall, and cancel the
	// request as if the client had gone.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	r.Body = &bodyRead{buf: buf, orig: r.Body}
	return nil
}

// jsonContentType accepts application/json and application/*+json with any parameters. A
// missing Content-Type is not JSON: a browser sends a body without one cross-origin, with no
// preflight (a no-cors fetch of a Blob), so reading it as JSON would let any web page post to
// the mock.
func jsonContentType(ct string) bool {
	if ct == "application/json" { // what clients send: no parameters to parse
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func tooLarge(maxBody int64) error {
	return apierr.New(apierr.RequestTooLarge, "", "The request body is larger than this mock accepts ("+strconv.FormatInt(maxBody, 10)+" bytes).")
}

// bodyRead is a request body already read into a pooled buffer. A handler takes the bytes with
// takeBody; one that reads r.Body as usual gets them too.
type bodyRead struct {
	buf  *bytes.Buffer
	orig io.ReadCloser // net/http's body, read to its end and closed
}

func (b *bodyRead) Read(p []byte) (int, error) {
	if b.buf == nil {
		return 0, io.EOF
	}
	return b.buf.Read(p)
}

// Close gives the buffer back to the pool.
func (b *bodyRead) Close() error {
	if b.buf != nil {
		putBuffer(b.buf)
		b.buf = nil
	}
	return nil
}

// dropBody gives back the buffer of a body read for a request that is refused after all.
func dropBody(r *http.Request) {
	if _, ok := r.Body.(*bodyRead); ok {
		putBuffer(takeBody(r))
	}
}

// takeBody hands over the body readBody read: the buffer (the caller puts it back with putBuffer
// when done with it) and r.Body restored to net/http's own, closed at its end, which net/http
// then leaves alone when the response starts.
func takeBody(r *http.Request) *bytes.Buffer {
	b := r.Body.(*bodyRead)
	buf := b.buf
	b.buf = nil
	r.Body = b.orig
	return buf
}
