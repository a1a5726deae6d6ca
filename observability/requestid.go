package observability

import (
	"encoding/hex"
	"math/rand/v2"
)

// RequestIDHeader carries the request id on every response.
const RequestIDHeader = "X-Request-Id"

// ValidRequestID reports whether id may be kept as a request id: the contract's
// ^[A-Za-z0-9._:-]{1,128}$. Anything else is replaced, never echoed, because it would otherwise
// flow into every signal. (A byte loop: it runs on every request.)
func ValidRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// newRequestID makes "req_" + 32 hex digits. Request ids need to be unique, not secret, so the
// runtime's fast per-thread generator is enough.
func newRequestID() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := rand.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	var out [36]byte
	copy(out[:], "req_")
	hex.Encode(out[4:], b[:])
	return string(out[:])
}
