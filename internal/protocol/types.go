// Package protocol owns the wire formats of the dialects the mock speaks — OpenAI's Chat
// Completions and Responses API, Anthropic's Messages, Google's Gemini API — and the one
// Request they all decode into: the strict decoders that classify every request field
// (supported, known but unsupported, unknown), and the hand-encoded answer, chunk and event shapes. Which dialect a
// request speaks, and what of this package it uses, is internal/dialect's business.
package protocol

import "encoding/json"

// Request is a validated request of any dialect: what the generator and the simulation read,
// whichever API it came in. Fields that the contract accepts but that
// have no effect on a deterministic mock (sampling, user, metadata, store, …) are checked by the
// decoder and then dropped: they are not kept here, so nothing downstream can log them.
//
// Its strings are cut from one copy of the request's body (DecodeChatRequest): whatever keeps
// one past the request — an open stream's answer — copies it (strings.Clone), or it keeps the
// whole body alive.
type Request struct {
	// Fields are the top-level members the client sent (present and not null). They are
	// protocol names only, for the content-free journal's picture of the client's setup.
	Fields   FieldSet
	Model    string
	Messages []Message
	Stream   bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// ParallelToolCalls is false only when the client sent parallel_tool_calls: false. (Beside
	// the other booleans: packed, a Request stays in its size class.)
	ParallelToolCalls bool
	// MaxTokens is the effective token budget per choice, as sent: max_completion_tokens when
	// set, else max_tokens (max_output_tokens, Anthropic's max_tokens); 0 means no budget was
	// sent (the model's default length applies). The model's output limit bounds it; the answer
	// stops at --max-tokens below it (generate.Input.TokenCeiling).
	MaxTokens int
	// MaxTokensParam names the field MaxTokens came from, for error messages and telemetry.
	MaxTokensParam string
	N              int // 1 when absent
	Stop           []string
	Seed           *int64
	Tools          []Tool
	ToolChoice     ToolChoice
	ResponseFormat ResponseFormat
	// Temperature is kept for the gen_ai.request.temperature span attribute, and for a reasoning
	// model, which refuses any but 1.
	Temperature *float64
	// Reasoning is what the request asks of a reasoning model; nil when it sends none of it, as
	// most requests do. Other models ignore it.
	Reasoning *Reasoning `json:",omitempty"`
	// Attachments are the images and documents of a Messages request, as the estimator counts
	// them; nil when it sends none, as most requests.
	Attachments *Attachments `json:"-"`
	// Echo is what a Responses API answer repeats of its request (dialect/responses sets it);
	// nil in the other dialects.
	Echo *ResponseEcho `json:"-"`
}

// Attachments are what a Messages request's image, document and search_result blocks bring to
// its prompt, as the estimator counts them (docs/protocol.md, Usage numbers): an image's pixel
// size, a PDF's size in bytes, a document's or a search result's text. Never an image's or a
// PDF's bytes: only what the rule reads of them.
type Attachments struct {
	// Images are the sizes of the images, in order; zero for one whose size the mock does not
	// know (a url or file source, data that is no PNG, JPEG, GIF or WebP).
	Images []ImageSize
	// PDFBytes are the decoded sizes of the base64 PDFs, in order; zero for a url or file one.
	PDFBytes []int
	// Texts are the texts of plain-text documents and the text blocks of content documents and
	// search results, cut from the body like the messages' (and, like them, never logged).
	Texts []string
}

// ImageSize is an image's size in pixels, as its data's header states it.
type ImageSize struct{ Width, Height int }

// attachments returns the request's Attachments, made when first needed.
func (r *Request) attachments() *Attachments {
	if r.Attachments == nil {
		r.Attachments = new(Attachments)
	}
	return r.Attachments
}

// Reasoning is what a request asks of a reasoning model (docs/protocol.md, Reasoning models).
type Reasoning struct {
	// Effort is reasoning_effort, or the Responses API's reasoning.effort; "" when absent.
	Effort string
	// Summary is the Responses API's reasoning.summary (or generate_summary): auto, concise or
	// detailed; "" asks for none.
	Summary string
	// Encrypted: include holds reasoning.encrypted_content.
	Encrypted bool
	// TopP is top_p when it is not 1, which a reasoning model refuses; nil otherwise.
	TopP *float64
	// SentBack are the encrypted_content values of the input's reasoning items, in order: a
	// reasoning model verifies them.
	SentBack []SentReasoning

	// Anthropic's extended thinking (a Messages request's thinking and output_config.effort,
	// which sets Effort): Thinking is enabled or adaptive when it is on, "" otherwise.
	Thinking string `json:",omitempty"`
	// ThinkingBudget is thinking.budget_tokens (enabled only); ThinkingOmitted is display:
	// omitted; ThinkingMaxTokens is max_tokens as sent.
	ThinkingBudget    int  `json:",omitempty"`
	ThinkingMaxTokens int  `json:",omitempty"`
	ThinkingOmitted   bool `json:",omitempty"`
	// SentThinking are the thinking and redacted_thinking blocks of the assistant turns sent
	// back, in order: a reasoning model verifies their signatures.
	SentThinking []SentThinking `json:",omitempty"`
	// FinalAssistant is the last assistant turn when it holds a tool_use block: thinking on, it
	// must open with a thinking block. Nil when there is none.
	FinalAssistant *AssistantTurn `json:",omitempty"`
}

// SentThinking is a thinking or redacted_thinking block sent back: where it stands, a digest of
// its text (never the text, which nothing downstream may keep), and its signature or data.
type SentThinking struct {
	Turn, Block int
	Redacted    bool
	Digest      [32]byte `json:"-"`
	Seal        string   `json:"-"`
}

// AssistantTurn is where an assistant turn stands in messages and its first block's type.
type AssistantTurn struct {
	Turn       int
	FirstBlock string
}

// SentReasoning is a reasoning item's encrypted_content that a client sent back, and the id
// sent beside it ("" when the item has none, as the Codex CLI sends them): client text, which
// nothing but the check may keep.
type SentReasoning struct {
	Item             int    // its index in input
	ID               string `json:"-"`
	EncryptedContent string
}

// reasoning returns the request's Reasoning, made when first needed.
func (r *Request) reasoning() *Reasoning {
	if r.Reasoning == nil {
		r.Reasoning = new(Reasoning)
	}
	return r.Reasoning
}

// FieldSet is a set of the top-level request members the decoder accepts, one bit per name (a
// fixed table, in sorted order). model and messages, which every decoded request has, are
// implied: the zero value is a request that sent only those. A FieldSet can only name protocol
// fields: unknown members are refused by the decoder, never recorded.
type FieldSet uint64

// Message is one validated message. Content is the text of a string content or of the text
// (and refusal) parts of an array content, concatenated in order.
type Message struct {
	Role       string // system, developer, user, assistant, tool
	Content    string
	Name       string
	ToolCallID string     // tool messages
	ToolCalls  []ToolCall // assistant messages
}

// ToolCall is a function call an assistant message carried (sent back by the client).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Tool is a function tool definition.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, compacted; nil when absent.
	Parameters json.RawMessage
	Strict     bool
}

// Tool choice modes.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	ToolChoiceFunction = "function" // Function names the tool
)

// ToolChoice is the validated tool_choice. Mode is "" when absent (which behaves as auto when
// tools are present and none otherwise, as in the protocol).
type ToolChoice struct {
	Mode     string
	Function string
}

// Response format types.
const (
	FormatText       = "text"
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// ResponseFormat is the validated response_format; Type is "" when absent (plain text).
type ResponseFormat struct {
	Type string
	// Name and Schema come from json_schema.name and json_schema.schema (Schema compacted; nil
	// when absent, in which case any JSON object is a valid answer).
	Name   string
	Schema json.RawMessage
}
