package observability

import "math/rand/v2"

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
// runtime's fast per-thread generator is enough; the digits are written straight from its two
// words, without a byte array and an encoder between them.
func newRequestID() string {
	const digits = "0123456789abcdef"
	var out [36]byte
	copy(out[:], "req_")
	hi, lo := rand.Uint64(), rand.Uint64()
	for i := range 16 {
		shift := 60 - 4*i
		out[4+i] = digits[hi>>shift&0xf]
		out[20+i] = digits[lo>>shift&0xf]
	}
	return string(out[:])
}
