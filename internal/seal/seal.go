// Package seal owns the mock's stateless sealing: what a client must send back unchanged — a
// Responses reasoning item's encrypted_content, an Anthropic thinking block's signature or a
// redacted_thinking block's data — is sealed with a key every replica shares, so that any
// replica makes the same bytes for the same request and accepts what any other made, with
// nothing stored.
//
// A seal is AES-256-GCM whose nonce is derived from the key, the purpose and the plaintext
// (HMAC-SHA256), as in a synthetic-IV construction: the same plaintext always seals to the same
// bytes, which is the point (replicas agree, answers stay deterministic), and two different
// plaintexts never share a nonce but by an HMAC collision. What the determinism gives away is
// only whether two seals hold the same plaintext, which an answer derived from its request
// discloses anyway. The purpose is the additional data: a seal made for one purpose never opens
// for another.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// Purposes of a seal: each is the additional data of its seals.
const (
	ReasoningItem = "openai.reasoning.encrypted_content"
	// ThinkingSignature is an Anthropic thinking block's signature; RedactedThinking a
	// redacted_thinking block's data.
	ThinkingSignature = "anthropic.thinking.signature"
	RedactedThinking  = "anthropic.redacted_thinking.data"
)

// version opens every seal, so that a later format can be told from this one.
const version = 1

// MinKeyChars is the shortest key a flag may give.
const MinKeyChars = 16

// Sealer seals and opens with one key. It is safe for concurrent use.
type Sealer struct {
	aead  cipher.AEAD
	nonce []byte // the HMAC key the nonces are derived with
}

// New makes a Sealer from a shared key of any length (at least MinKeyChars, which the caller
// checks); the AES and nonce keys are derived from it, each for its own use.
func New(key string) *Sealer {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte("mockgateway seal " + label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("aes-256-gcm"))
	if err != nil {
		panic("seal: " + err.Error()) // a 32-byte key cannot be refused
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("seal: " + err.Error())
	}
	return &Sealer{aead: aead, nonce: derive("nonce")}
}

// Random makes a Sealer with a key of its own, for a process whose replicas share none: its
// seals open only in the process that made them.
func Random() *Sealer {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		panic("seal: " + err.Error()) // crypto/rand does not fail on supported platforms
	}
	return New(base64.RawStdEncoding.EncodeToString(k[:]))
}

// Seal seals plaintext for purpose into URL-safe base64 text.
func (s *Sealer) Seal(purpose string, plaintext []byte) string {
	m := hmac.New(sha256.New, s.nonce)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(plaintext)
	n := s.aead.NonceSize()
	out := make([]byte, 1, 1+n+len(plaintext)+s.aead.Overhead())
	out[0] = version
	out = append(out, m.Sum(nil)[:n]...)
	out = s.aead.Seal(out, out[1:1+n], plaintext, []byte(purpose))
	return base64.RawURLEncoding.EncodeToString(out)
}

// ErrInvalid is every reason a seal does not open: not base64, too short, another version, or
// not sealed by this key for this purpose (forged, tampered, another key's, another purpose's).
var ErrInvalid = errors.New("the sealed content could not be decrypted or parsed")

// Open returns the plaintext of a seal made by Seal with the same key and purpose.
func (s *Sealer) Open(purpose, sealed string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < 1+n+s.aead.Overhead() || raw[0] != version {
		return nil, ErrInvalid
	}
	plain, err := s.aead.Open(nil, raw[1:1+n], raw[1+n:], []byte(purpose))
	if err != nil {
		return nil, ErrInvalid
	}
	return plain, nil
}
