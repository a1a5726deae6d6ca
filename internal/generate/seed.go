package generate

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math/bits"
	"math/rand/v2"

	"mockgateway/internal/protocol"
)

// seedDomain versions the seed derivation: bump it only on purpose, because every generated
// answer changes with it.
const seedDomain = "mockgateway/generate/v1"

// canon writes a canonical, length-prefixed encoding into a hash, so that no two different
// inputs can produce the same byte stream (e.g. ("ab","c") versus ("a","bc")).
type canon struct {
	h       hash.Hash
	scratch [256]byte // strings are copied through it: []byte(s) would allocate per message
}

func (c *canon) uint(v uint64) {
	binary.BigEndian.PutUint64(c.scratch[:8], v)
	c.h.Write(c.scratch[:8])
}

func (c *canon) str(s string) {
	c.uint(uint64(len(s)))
	for len(s) > 0 {
		n := copy(c.scratch[:], s)
		c.h.Write(c.scratch[:n])
		s = s[n:]
	}
}

func (c *canon) bytes(b []byte) {
	c.uint(uint64(len(b)))
	c.h.Write(b)
}

func (c *canon) bool(v bool) {
	if v {
		c.uint(1)
	} else {
		c.uint(0)
	}
}

// requestSeed is the 32-byte seed of a request: SHA-256 over everything that decides the words.
// stop and the token budget are deliberately left out: they only cut the output, so a request
// with a stop sequence or a smaller budget yields a prefix of the same words.
func requestSeed(model string, req *protocol.ChatRequest) [32]byte {
	c := canon{h: sha256.New()}
	c.str(seedDomain)
	c.str(model)

	c.uint(uint64(len(req.Messages)))
	for i := range req.Messages {
		m := &req.Messages[i]
		c.str(m.Role)
		c.str(m.Name)
		c.str(m.Content)
		c.str(m.ToolCallID)
		c.uint(uint64(len(m.ToolCalls)))
		for j := range m.ToolCalls {
			tc := &m.ToolCalls[j]
			c.str(tc.ID)
			c.str(tc.Name)
			c.str(tc.Arguments)
		}
	}

	c.uint(uint64(len(req.Tools)))
	for i := range req.Tools {
		t := &req.Tools[i]
		c.str(t.Name)
		c.str(t.Description)
		c.bytes(t.Parameters)
		c.bool(t.Strict)
	}

	// Absent values are hashed as the value they behave as, so omitting a field and sending its
	// default give the same answer.
	mode := effectiveToolChoice(req)
	c.str(mode)
	if mode == protocol.ToolChoiceFunction {
		c.str(req.ToolChoice.Function)
	} else {
		c.str("")
	}
	c.bool(req.ParallelToolCalls)

	format := req.ResponseFormat.Type
	if format == "" {
		format = protocol.FormatText
	}
	c.str(format)
	c.str(req.ResponseFormat.Name)
	c.bytes(req.ResponseFormat.Schema)

	if req.Seed != nil {
		c.bool(true)
		c.uint(uint64(*req.Seed))
	} else {
		c.bool(false)
	}

	var seed [32]byte
	c.h.Sum(seed[:0])
	return seed
}

// effectiveToolChoice resolves an absent tool_choice the way the protocol does: auto when tools
// are present, none otherwise.
func effectiveToolChoice(req *protocol.ChatRequest) string {
	if req.ToolChoice.Mode != "" {
		return req.ToolChoice.Mode
	}
	if len(req.Tools) > 0 {
		return protocol.ToolChoiceAuto
	}
	return protocol.ToolChoiceNone
}

// subSeed derives an independent 32-byte seed for a labelled part of the output (a choice, a
// tool-call id) from the request seed.
func subSeed(seed [32]byte, label string, a, b uint64) [32]byte {
	var buf [len(seedDomain) + 32 + 16 + 16]byte
	p := append(buf[:0], seed[:]...)
	p = append(p, label...)
	p = binary.BigEndian.AppendUint64(p, a)
	p = binary.BigEndian.AppendUint64(p, b)
	return sha256.Sum256(p)
}

// rng is the choice's random stream. It uses the ChaCha8 source of math/rand/v2, whose output is
// specified (C2SP chacha8rand) and therefore identical on every machine and Go version, and it
// reduces to a range with its own code instead of rand.Rand's methods, so that no change in the
// standard library's reduction algorithms can change the mock's answers.
type rng struct {
	src   rand.ChaCha8
	later func() [32]byte // the seed still to apply at the first draw, or nil
}

func (r *rng) seed(s [32]byte) { r.src.Seed(s); r.later = nil }

// seedLater seeds the stream at its first draw: the seed costs two SHA-256 sums, and answers
// that draw nothing (echo) skip them. The draws are the same either way.
func (r *rng) seedLater(seed func() [32]byte) { r.later = seed }

func (r *rng) uint64() uint64 {
	if r.later != nil {
		r.seed(r.later())
	}
	return r.src.Uint64()
}

// intn returns a uniform integer in [0, n) (0 when n <= 0), by Lemire's multiply-and-reject
// method.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(r.uint64n(uint64(n)))
}

func (r *rng) uint64n(n uint64) uint64 {
	if n == 0 {
		return r.uint64()
	}
	hi, lo := bits.Mul64(r.uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(r.uint64(), n)
		}
	}
	return hi
}

// between returns a uniform integer in [lo, hi].
func (r *rng) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.intn(hi-lo+1)
}
