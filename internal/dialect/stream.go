package dialect

import "context"

// Events is a stream's answer as the events still to come, sent a step at a time as the stream
// goes. The steps are pulled, not written by nested loops, so that the stream loop
// (internal/server's stream.go) can stop at the first token — to send it with the headers in
// one write — and go on from there. It is the one loop for every dialect.
//
// The goroutine parks in Next for the whole stream, in Sink.BeforeToken: Next keeps a short
// stack and allocates nothing per token (TestParkedStreamStack, TestBlockedStreamStack).
type Events interface {
	// Next sends the next step's events to s: token reports a token's event sent, more whether
	// a step was left to send. An error is why the stream stopped (the Sink's).
	Next(ctx context.Context, s Sink) (token, more bool, err error)
	// End sends the events that close a stream whose steps were all sent: the settled finish
	// and the usage, and the stream's end where the dialect has one.
	End(ctx context.Context, s Sink) error
}

// Sink is an open stream as a dialect's events see it: an event is appended to Buffer and handed
// to Commit, which makes it pending; the stream writes what is pending when the next token is
// due or the stream ends.
type Sink interface {
	// Buffer is the buffer to append the next event to.
	Buffer() []byte
	// Commit makes the event appended to the buffer (b, the buffer with it) pending, unless the
	// simulated mid-stream fault strikes first: then the event is dropped and the error says
	// why the stream ends. It counts the event as a chunk, and as a token when token is set.
	Commit(ctx context.Context, b []byte, token bool) error
	// CommitTokens is Commit for an event that carries n tokens at once (Gemini's function
	// call, sent whole): it counts n tokens, as n events of one token each would.
	CommitTokens(ctx context.Context, b []byte, n int) error
	// Append makes b, the buffer with frames that are not events (a stream's end marker),
	// pending without counting them.
	Append(b []byte)
	// BeforeToken is what comes before every token but the first: the pending token goes out,
	// then the between-chunk latency.
	BeforeToken() error
	// Seq is the number of events committed so far.
	Seq() int
}
