package protocol

import "slices"

// anthropicFieldNames are the top-level members a Messages request the decoder accepts can carry
// (anthropicTopField's supported and noEffect keys), sorted. A FieldSet of a Messages request
// has the anthropicDialect bit, and its other bits index this table, as a Responses request's
// index responsesFieldNames: the three dialects share FieldSet, the journal's shape and its JSON.
var anthropicFieldNames = [...]string{
	"cache_control",
	"context_management",
	"diagnostics",
	"inference_geo",
	"max_tokens",
	"mcp_servers",
	"messages",
	"metadata",
	"model",
	"output_config",
	"service_tier",
	"speed",
	"stop_sequences",
	"stream",
	"system",
	"temperature",
	"thinking",
	"tool_choice",
	"tools",
	"top_k",
	"top_p",
}

// anthropicDialect marks a FieldSet of a Messages request; anthropicRequired are its implied
// members (messages and model; max_tokens is a bit of its own, since count_tokens has none).
const (
	anthropicDialect  FieldSet = 1 << 62
	anthropicRequired FieldSet = 1<<6 | 1<<8
)

// anthropicOnly are names only a Messages request carries, which tell its FieldSet's JSON from
// a chat request's.
var anthropicOnly = []string{"cache_control", "context_management", "diagnostics", "inference_geo", "speed", "mcp_servers", "output_config", "stop_sequences", "system", "thinking", "top_k"}

func anthropicFieldIndex(k string) int {
	i, ok := slices.BinarySearch(anthropicFieldNames[:], k)
	if !ok {
		return -1
	}
	return i
}

// anthropicFieldSetOf is fieldSetOf for a Messages request.
func anthropicFieldSetOf(o members[string]) FieldSet {
	s := anthropicDialect
	for _, f := range o {
		if i := anthropicFieldIndex(f.key); i >= 0 {
			s |= 1 << i
		}
	}
	return s &^ anthropicRequired
}

// anthropic reports whether s is a Messages request's (POST /v1/messages or count_tokens). The
// bit chooses the table the set's names come from; which dialect a request speaks is the
// route's business (internal/dialect), never a question asked of its fields.
func (s FieldSet) anthropic() bool { return s&anthropicDialect != 0 }
