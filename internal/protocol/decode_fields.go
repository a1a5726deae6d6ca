package protocol

import (
	"encoding/json"
	"errors"
	"iter"
	"math/bits"
	"slices"
	"strings"
)

// requestFieldNames are the top-level members a request the decoder accepts can carry: every key
// topField classifies as supported or noEffect, in sorted order (the order the decoder examines
// them in). A FieldSet's bit i stands for requestFieldNames[i], and fieldIndex finds i. Members
// the decoder refuses (unknown or unsupported ones) are not here: a request that carries one is
// never decoded. TestFieldNamesAreTheDecoders holds this table to topField's cases and to
// fieldIndex.
var requestFieldNames = [...]string{
	"frequency_penalty",
	"logit_bias",
	"logprobs",
	"max_completion_tokens",
	"max_tokens",
	"messages", // fieldMessages
	"metadata",
	"modalities",
	"model", // fieldModel
	"n",
	"parallel_tool_calls",
	"presence_penalty",
	"prompt_cache_key",
	"prompt_cache_options",
	"prompt_cache_retention",
	"reasoning_effort",
	"response_format",
	"safety_identifier",
	"seed",
	"service_tier",
	"stop",
	"store",
	"stream",
	"stream_options",
	"temperature",
	"tool_choice",
	"tools",
	"top_p",
	"user",
	"verbosity",
}

// The indexes of the required members in requestFieldNames.
const (
	fieldMessages = 5
	fieldModel    = 8
)

// requiredFields are the members every decoded request has. They are implied rather than stored,
// so that the zero FieldSet means "only the required members": a minimal decoded request has
// the same (zero) FieldSet as a request built by hand.
const requiredFields FieldSet = 1<<fieldMessages | 1<<fieldModel

// responsesFieldNames are the top-level members a Responses API request the decoder accepts can
// carry (responsesTopField's supported and noEffect keys), sorted. A FieldSet of a Responses
// request has the responsesDialect bit, and its other bits index this table instead of
// requestFieldNames: the two dialects share FieldSet, the journal's shape and its JSON.
var responsesFieldNames = [...]string{
	"background",
	"client_metadata",
	"include",
	"input", // the dialect's required member besides model
	"instructions",
	"max_output_tokens",
	"max_tool_calls",
	"metadata",
	"model",
	"parallel_tool_calls",
	"prompt_cache_key",
	"prompt_cache_options",
	"prompt_cache_retention",
	"reasoning",
	"safety_identifier",
	"service_tier",
	"store",
	"stream",
	"stream_options",
	"temperature",
	"text",
	"tool_choice",
	"tools",
	"top_logprobs",
	"top_p",
	"truncation",
	"user",
}

// responsesDialect marks a FieldSet of a Responses API request; responsesRequired are its
// implied members (input and model).
const (
	responsesDialect  FieldSet = 1 << 63
	responsesRequired FieldSet = 1<<3 | 1<<8
)

// responsesFieldIndex is k's index in responsesFieldNames, or -1.
func responsesFieldIndex(k string) int {
	i, ok := slices.BinarySearch(responsesFieldNames[:], k)
	if !ok {
		return -1
	}
	return i
}

// fieldSetOf records which of the accepted top-level members o has. o is the top level the key
// pass has accepted, so every key is in requestFieldNames; nulls are already dropped from it.
// It allocates nothing.
func fieldSetOf(o members[string]) FieldSet {
	var s FieldSet
	for _, f := range o {
		if i := fieldIndex(f.key); i >= 0 {
			s |= 1 << i
		}
	}
	return s &^ requiredFields
}

// responsesFieldSetOf is fieldSetOf for a Responses API request.
func responsesFieldSetOf(o members[string]) FieldSet {
	s := responsesDialect
	for _, f := range o {
		if i := responsesFieldIndex(f.key); i >= 0 {
			s |= 1 << i
		}
	}
	return s &^ responsesRequired
}

// all is s with the implied required members, without the dialect bit.
func (s FieldSet) all() FieldSet {
	if s&anthropicDialect != 0 {
		return (s | anthropicRequired) &^ anthropicDialect
	}
	if s&responsesDialect != 0 {
		return (s | responsesRequired) &^ responsesDialect
	}
	return s | requiredFields
}

// names is the table s's bits index, and index finds a name's bit in it.
func (s FieldSet) names() ([]string, func(string) int) {
	if s&anthropicDialect != 0 {
		return anthropicFieldNames[:], anthropicFieldIndex
	}
	if s&responsesDialect != 0 {
		return responsesFieldNames[:], responsesFieldIndex
	}
	return requestFieldNames[:], fieldIndex
}

// responses reports whether s is a Responses API request's (POST /v1/responses), as anthropic.
func (s FieldSet) responses() bool { return s&responsesDialect != 0 }

// Has reports whether the request carried the top-level member name (not null). The required
// members (model, and messages or input) are implied, so Has is true for them.
func (s FieldSet) Has(name string) bool {
	_, index := s.names()
	i := index(name)
	return i >= 0 && s.all()&(1<<i) != 0
}

// Len is the number of members the request carried, model and messages included.
func (s FieldSet) Len() int { return bits.OnesCount64(uint64(s.all())) }

// All yields the names of the members the request carried, in sorted order, model and messages
// included. The names are the protocol's own, never a client's text.
func (s FieldSet) All() iter.Seq[string] {
	names, _ := s.names()
	return func(yield func(string) bool) {
		for rest := uint64(s.all()); rest != 0; rest &= rest - 1 {
			if !yield(names[bits.TrailingZeros64(rest)]) {
				return
			}
		}
	}
}

// Names returns All as a slice.
func (s FieldSet) Names() []string { return slices.AppendSeq(make([]string, 0, s.Len()), s.All()) }

// String is the names, comma-separated.
func (s FieldSet) String() string { return strings.Join(s.Names(), ",") }

// MarshalJSON writes the names as a JSON array of strings, in sorted order.
func (s FieldSet) MarshalJSON() ([]byte, error) {
	return s.AppendJSON(make([]byte, 0, 16*s.Len())), nil
}

// AppendJSON appends what MarshalJSON writes to buf (the journal's entry encoder writes it so).
func (s FieldSet) AppendJSON(buf []byte) []byte {
	buf = append(buf, '[')
	first := true
	for name := range s.All() {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		// The names are plain ASCII identifiers: nothing to escape.
		buf = append(buf, '"')
		buf = append(buf, name...)
		buf = append(buf, '"')
	}
	return append(buf, ']')
}

// errNotAField does not name the field: the JSON read may be anyone's.
var errNotAField = errors.New("protocol: not a top-level request field name")

// UnmarshalJSON reads what MarshalJSON writes. A name that is not an accepted top-level member
// is an error: a FieldSet cannot hold it.
func (s *FieldSet) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	// A Responses request names input; a chat request never does.
	out, required, index := FieldSet(0), requiredFields, fieldIndex
	if slices.Contains(names, "input") {
		out, required, index = responsesDialect, responsesRequired, responsesFieldIndex
	}
	if slices.ContainsFunc(names, func(n string) bool { return slices.Contains(anthropicOnly, n) }) {
		out, required, index = anthropicDialect, anthropicRequired, anthropicFieldIndex
	}
	for _, n := range names {
		i := index(n)
		if i < 0 {
			return errNotAField
		}
		out |= 1 << i
	}
	*s = out &^ required
	return nil
}

// fieldIndex is k's index in requestFieldNames, or -1. A switch, which the compiler turns into a
// search by length first, costs less than a binary search of the table; TestFieldNamesAreTheDecoders
// holds the two to each other.
func fieldIndex(k string) int {
	switch k {
	case "frequency_penalty":
		return 0
	case "logit_bias":
		return 1
	case "logprobs":
		return 2
	case "max_completion_tokens":
		return 3
	case "max_tokens":
		return 4
	case "messages":
		return 5
	case "metadata":
		return 6
	case "modalities":
		return 7
	case "model":
		return 8
	case "n":
		return 9
	case "parallel_tool_calls":
		return 10
	case "presence_penalty":
		return 11
	case "prompt_cache_key":
		return 12
	case "prompt_cache_options":
		return 13
	case "prompt_cache_retention":
		return 14
	case "reasoning_effort":
		return 15
	case "response_format":
		return 16
	case "safety_identifier":
		return 17
	case "seed":
		return 18
	case "service_tier":
		return 19
	case "stop":
		return 20
	case "store":
		return 21
	case "stream":
		return 22
	case "stream_options":
		return 23
	case "temperature":
		return 24
	case "tool_choice":
		return 25
	case "tools":
		return 26
	case "top_p":
		return 27
	case "user":
		return 28
	case "verbosity":
		return 29
	}
	return -1
}
