package protocol

import "encoding/json"

// Fixed response fields. system_fingerprint names the interface version the mock emulates.
const (
	SystemFingerprint = "fp_mockgateway_4_2"
	ServiceTier       = "default"
)

// Completion is the non-streaming response body.
type Completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"` // "chat.completion"
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	Choices           []CompletionChoice `json:"choices"`
	Usage             Usage              `json:"usage"`
	SystemFingerprint string             `json:"system_fingerprint"`
	ServiceTier       string             `json:"service_tier"`
}

// CompletionChoice is one choice of a Completion.
type CompletionChoice struct {
	Index        int              `json:"index"`
	Message      AssistantMessage `json:"message"`
	Logprobs     *struct{}        `json:"logprobs"` // always null: logprobs are unsupported
	FinishReason string           `json:"finish_reason"`
}

// AssistantMessage is the generated message. Content is null when the choice calls tools.
type AssistantMessage struct {
	Role        string         `json:"role"`
	Content     *string        `json:"content"`
	Refusal     *string        `json:"refusal"`
	ToolCalls   []ToolCallJSON `json:"tool_calls,omitempty"`
	Annotations []struct{}     `json:"annotations"`
}

// ToolCallJSON is a tool call in a response message.
type ToolCallJSON struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the estimator's token accounting.
type Usage struct {
	PromptTokens            int                     `json:"prompt_tokens"`
	CompletionTokens        int                     `json:"completion_tokens"`
	TotalTokens             int                     `json:"total_tokens"`
	PromptTokensDetails     PromptTokensDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails CompletionTokensDetails `json:"completion_tokens_details"`
}

// PromptTokensDetails is always zero: the mock caches nothing.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// CompletionTokensDetails holds a reasoning model's reasoning tokens (0 for other models).
type CompletionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// NewUsage fills the totals.
func NewUsage(prompt, completion int) Usage {
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// Chunk is one streamed chat.completion.chunk.
type Chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"` // "chat.completion.chunk"
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	ServiceTier       string        `json:"service_tier"`
	Choices           []ChunkChoice `json:"choices"`
	// Usage is omitted without include_usage, the literal null on every chunk with it, and the
	// usage object on the last chunk.
	Usage json.RawMessage `json:"usage,omitempty"`
	// head is the members before "choices" encoded once by FixHead, for AppendJSON to copy.
	head []byte
}

// ChunkChoice is the single choice a chunk carries.
type ChunkChoice struct {
	Index        int       `json:"index"`
	Delta        Delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// Delta is the change a chunk brings. The zero Delta encodes as {} (the final chunk's).
type Delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	Refusal   *string         `json:"refusal,omitempty"` // a fixture's refusal, piece by piece
	ToolCalls []ToolCallDelta `json:"tool_calls,omitempty"`
}

// ToolCallDelta is one step of a streamed tool call: the first carries id, type and name.
type ToolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function FunctionDelta `json:"function"`
}

// FunctionDelta carries the name (first delta only) and an arguments fragment ("" at first).
type FunctionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}
