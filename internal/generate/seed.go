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

// canon writes a canonical, length-prefixed encoding into SHA-256, so that no two different
// inputs can produce the same byte stream (e.g. ("ab","c") versus ("a","bc")). The encoding of a
// short request (the load test's is 250 bytes) is gathered on the stack and hashed by one
// sha256.Sum256, with no allocation and no Write call per field; a longer one spills into
// sha256.New through a heap buffer. Either way the digest is of the same bytes
// (BenchmarkRequestSeed; TestAnswerGridPinned hashes requests of every size around the buffer).
type canon struct {
	buf   [canonStackBytes]byte
	n     int       // bytes in buf
	h     hash.Hash // nil until the encoding outgrows buf
	spill []byte    // once spilled: the bytes not yet written to h (never buf, which stays on the stack)
}

const (
	canonStackBytes = 1024
	canonSpillBytes = 256 // as the scratch that strings were copied through before
)

// canonWrite appends p to the encoding.
func canonWrite[T string | []byte](c *canon, p T) {
	if c.h == nil {
		if len(p) <= len(c.buf)-c.n {
			c.n += copy(c.buf[c.n:], p)
			return
		}
		c.spillToHash()
	}
	for len(p) > 0 {
		if len(c.spill) == cap(c.spill) {
			c.h.Write(c.spill)
			c.spill = c.spill[:0]
		}
		k := min(len(p), cap(c.spill)-len(c.spill))
		c.spill = append(c.spill, p[:k]...)
		p = p[k:]
	}
}

// spillToHash moves the encoding so far from the stack into the hash's heap buffer.
func (c *canon) spillToHash() {
	c.h = sha256.New()
	c.spill = append(make([]byte, 0, max(canonSpillBytes, c.n)), c.buf[:c.n]...)
}

// sum returns the SHA-256 of the encoding.
func (c *canon) sum() (seed [32]byte) {
	if c.h == nil {
		return sha256.Sum256(c.buf[:c.n])
	}
	c.h.Write(c.spill)
	copy(seed[:], c.h.Sum(nil))
	return seed
}

func (c *canon) uint(v uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	canonWrite(c, b[:])
}

func (c *canon) str(s string) {
	c.uint(uint64(len(s)))
	canonWrite(c, s)
}

func (c *canon) bytes(b []byte) {
	c.uint(uint64(len(b)))
	if c.h == nil && len(b) <= len(c.buf)-c.n {
		canonWrite(c, b)
		return
	}
	// Too long for the stack: straight into the hash, uncopied (a schema may be megabytes).
	if c.h == nil {
		c.spillToHash()
	}
	c.h.Write(c.spill)
	c.spill = c.spill[:0]
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
func requestSeed(model string, req *protocol.Request) [32]byte {
	var c canon
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

	return c.sum()
}

// effectiveToolChoice resolves an absent tool_choice the way the protocol does: auto when tools
// are present, none otherwise.
func effectiveToolChoice(req *protocol.Request) string {
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
	src rand.ChaCha8
	// While from is set, the stream is still to be seeded, at its first draw, with choice's seed
	// derived from the request's (see seedLater).
	from   *lazySeed
	choice uint64
}

func (r *rng) seed(s [32]byte) { r.src.Seed(s); r.from = nil }

// seedLater seeds the stream at its first draw with the seed of the request's choice: the seed
// costs two SHA-256 sums, and answers that draw nothing (echo) skip them. The draws are the
// same either way.
func (r *rng) seedLater(from *lazySeed, choice int) { r.from, r.choice = from, uint64(choice) }

func (r *rng) uint64() uint64 {
	if r.from != nil {
		r.seed(subSeed(r.from.get(), "choice", r.choice, 0))
	}
	return r.src.Uint64()
}

// lazySeed is a request's seed (requestSeed), hashed from all of the request on first use.
type lazySeed struct {
	model string
	req   *protocol.Request
	seed  [32]byte
	done  bool
}

func (s *lazySeed) get() [32]byte {
	if !s.done {
		s.seed, s.done = requestSeed(s.model, s.req), true
	}
	return s.seed
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
