package server

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"mockgateway/internal/quota"
)

// TestBucketKeyBytes: bucketKey's one hash over a buffer names the buckets and the organization
// exactly as hashing the parts in turn does (the store's keys and the refusals' organizations
// do not change), for a model, scope and limits that fit its buffer on the stack and for ones
// that do not.
func TestBucketKeyBytes(t *testing.T) {
	inTurn := func(model, scope string, l *quota.Limits, client *[sha256.Size]byte) quota.Key {
		k := sha256.New()
		for _, part := range []string{model, scope, l.String()} {
			k.Write([]byte(part))
			k.Write([]byte{0})
		}
		k.Write(client[:])
		key := quota.Key{ID: hex.EncodeToString(k.Sum(nil)[:16]), Model: model, Scope: scope}
		o := sha256.Sum256(append([]byte("org\x00"), client[:]...))
		copy(key.Org[:], o[:])
		return key
	}
	for _, c := range []struct {
		model, scope, client string
		limits               quota.Limits
	}{
		{"mock-chat", "", "", quota.Limits{Requests: 3}},
		{"mock-limited", "test-7", "sk-secret", quota.Limits{Requests: 1, Tokens: 2, Daily: 3, InputTokens: 4, OutputTokens: 5, Window: 5_000_000_000}},
		{strings.Repeat("m", 300), strings.Repeat("s", 200), "k", quota.Limits{Tokens: 1 << 40}},
	} {
		client := sha256.Sum256([]byte(c.client))
		if got, want := bucketKey(c.model, c.scope, &c.limits, &client), inTurn(c.model, c.scope, &c.limits, &client); got != want {
			t.Errorf("%.20s %.20s: %+v, want %+v", c.model, c.scope, got, want)
		}
	}
}
