package dialect_test

import (
	"net/http"
	"testing"

	"mockgateway/internal/dialect"
	"mockgateway/internal/dialect/anthropic"
	"mockgateway/internal/dialect/chat"
)

// TestSetChooses: on a shared route the first dialect whose marker the request carries answers,
// and the default one when it carries none.
func TestSetChooses(t *testing.T) {
	openAI, messages := chat.New(nil), anthropic.New(nil)
	s := &dialect.Set{Default: openAI, Marked: []dialect.Dialect{messages}}
	if got := s.Choose(http.Header{"Anthropic-Version": {"2023-06-01"}}); got != messages {
		t.Errorf("anthropic-version chose %T", got)
	}
	if got := s.Choose(http.Header{"X-Api-Key": {"k"}}); got != openAI {
		t.Errorf("no marker chose %T", got)
	}
}
