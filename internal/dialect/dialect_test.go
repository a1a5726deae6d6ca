package dialect_test

import (
	"net/http"
	"testing"

	"mockgateway/internal/dialect"
	"mockgateway/internal/dialect/anthropic"
	"mockgateway/internal/dialect/chat"
	"mockgateway/internal/dialect/google"
	"mockgateway/internal/dialect/responses"
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
	if got := s.Choose(http.Header{"Anthropic-Version": {""}}); got != openAI {
		t.Errorf("an empty marker chose %T", got)
	}
}

// TestNames: each dialect names itself, as the journal records it and the console shows it; the
// Responses API does not inherit chat's name.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		d    dialect.Dialect
		want string
	}{
		{chat.New(nil), "OpenAI Chat Completions"}, {responses.New(nil), "OpenAI Responses"},
		{anthropic.New(nil), "Anthropic Messages"}, {google.New(nil, google.Generate), "Google Gemini"}, {google.New(nil, google.Stream), "Google Gemini"},
	} {
		if got := c.d.Name(); got != c.want {
			t.Errorf("%T: Name() = %q, want %q", c.d, got, c.want)
		}
	}
}
