package generate

import (
	"strings"

	"mockgateway/internal/protocol"
)

// Behavior is what a mock model does.
type Behavior string

// The behaviors of the built-in mock models.
const (
	BehaviorEcho  Behavior = "echo"  // mock-echo
	BehaviorChat  Behavior = "chat"  // mock-chat
	BehaviorTools Behavior = "tools" // mock-tools (tool-capable)
)

// Input is everything the generator reads.
type Input struct {
	Model    string // catalog id; part of the seed
	Behavior Behavior
	// DefaultTokens is the model's length in pieces for prose (mock-chat, mock-tools' text
	// answers). Zero or negative means fallbackDefaultTokens.
	DefaultTokens int
	Request       *protocol.ChatRequest
}

// ToolCall is one generated function call.
type ToolCall struct {
	ID        string // "call_" + 24 lowercase alphanumerics, derived from the request
	Name      string
	Arguments []string // argument fragments, one token each; joined they are the arguments JSON
}

// Choice is one generated choice.
type Choice struct {
	Index int
	// Content holds the content pieces, one token each; joined they are the message content. It
	// is nil when the choice calls tools, and non-nil (possibly empty) otherwise.
	Content      []string
	ToolCalls    []ToolCall // nil unless the choice calls tools
	FinishReason string     // "stop", "length" or "tool_calls"
}

// Text returns the message content.
func (c Choice) Text() string { return strings.Join(c.Content, "") }

// Tokens returns the completion tokens of the choice: its content pieces plus its argument
// fragments, which is also the number of content or argument deltas a stream emits for it.
func (c Choice) Tokens() int {
	n := len(c.Content)
	for i := range c.ToolCalls {
		n += len(c.ToolCalls[i].Arguments)
	}
	return n
}

// Result is a generated completion.
type Result struct {
	Choices          []Choice // len == Request.N (at least 1), Index 0..N-1
	PromptTokens     int
	CompletionTokens int // sum of Tokens() over choices
}

// Finish reasons.
const (
	finishStop      = "stop"
	finishLength    = "length"
	finishToolCalls = "tool_calls"
)

// fallbackDefaultTokens is the prose length used when the catalog gives none.
const fallbackDefaultTokens = 32

// generation holds what is shared by the choices of one request, computed once.
type generation struct {
	in            Input
	req           *protocol.ChatRequest
	seed          [32]byte // see requestSeed; zero until first needed
	seeded        bool
	defaultTokens int
	stops         []string

	calls      []int     // indices into req.Tools of the calls each choice makes; nil: text
	argSchemas []*jvalue // parsed parameters of each call (nil: "{}")

	format     string  // response_format type, "" for text
	respSchema *jvalue // parsed json_schema schema; nil: any JSON object
	afterTool  bool    // the last message is a tool result
	echoBody   string  // the last user message's content
	hasUser    bool
}

// Generate produces the completion of a request. It is a pure function of its input: see the
// package documentation for the exact rules.
func Generate(in Input) Result {
	req := in.Request
	if req == nil {
		req = &protocol.ChatRequest{}
	}
	g := newGeneration(in, req)
	n := max(req.N, 1)
	res := Result{Choices: make([]Choice, n), PromptTokens: PromptTokens(req)}
	var r rng // one ChaCha8 state, reseeded for every choice
	for i := range n {
		r.seedLater(func() [32]byte { return subSeed(g.requestSeed(), "choice", uint64(i), 0) })
		c := g.choice(i, &r)
		res.Choices[i] = c
		res.CompletionTokens += c.Tokens()
	}
	return res
}

// requestSeed is the request's seed, hashed from all of it on first use: an echo answer draws
// nothing at random, so it never pays for the hash.
func (g *generation) requestSeed() [32]byte {
	if !g.seeded {
		g.seed, g.seeded = requestSeed(g.in.Model, g.req), true
	}
	return g.seed
}

func newGeneration(in Input, req *protocol.ChatRequest) *generation {
	g := &generation{
		in:            in,
		req:           req,
		defaultTokens: in.DefaultTokens,
		format:        req.ResponseFormat.Type,
	}
	if g.defaultTokens <= 0 {
		g.defaultTokens = fallbackDefaultTokens
	}
	for _, s := range req.Stop {
		if s != "" {
			g.stops = append(g.stops, s)
		}
	}
	if n := len(req.Messages); n > 0 {
		g.afterTool = req.Messages[n-1].Role == "tool"
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			g.echoBody, g.hasUser = req.Messages[i].Content, true
			break
		}
	}
	if in.Behavior == BehaviorTools {
		g.calls = planToolCalls(req)
		g.argSchemas = make([]*jvalue, len(g.calls))
		for k, t := range g.calls {
			if p := req.Tools[t].Parameters; len(p) > 0 {
				g.argSchemas[k], _ = parseJSON(p) // undecodable: nil, i.e. "{}"
			}
		}
	}
	if g.format == protocol.FormatJSONSchema && len(req.ResponseFormat.Schema) > 0 {
		g.respSchema, _ = parseJSON(req.ResponseFormat.Schema) // undecodable: like json_object
	}
	return g
}

// maxParallelCalls is the most calls one choice makes when parallel tool calls are allowed.
const maxParallelCalls = 3

// planToolCalls decides which tools mock-tools calls (rule 5 of the package documentation), or
// nil when it answers with text.
func planToolCalls(req *protocol.ChatRequest) []int {
	if len(req.Tools) == 0 {
		return nil
	}
	mode := effectiveToolChoice(req)
	if mode == protocol.ToolChoiceNone {
		return nil
	}
	forced := mode == protocol.ToolChoiceRequired || mode == protocol.ToolChoiceFunction
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" && !forced {
		return nil
	}
	if mode == protocol.ToolChoiceFunction {
		for i := range req.Tools {
			if req.Tools[i].Name == req.ToolChoice.Function {
				return []int{i}
			}
		}
		return []int{0} // the decoder rejects unknown names; stay total anyway
	}
	if req.ParallelToolCalls && len(req.Tools) >= 2 {
		calls := make([]int, min(len(req.Tools), maxParallelCalls))
		for i := range calls {
			calls[i] = i
		}
		return calls
	}
	return []int{0}
}

func (g *generation) choice(i int, r *rng) Choice {
	if g.calls != nil {
		return g.toolChoice(i, r)
	}
	pieces := g.fullText(r)
	finish := finishStop
	pieces = cutAtStop(pieces, g.stops)
	if budget := g.req.MaxTokens; budget > 0 && len(pieces) > budget {
		pieces, finish = pieces[:budget], finishLength
	}
	if pieces == nil {
		pieces = []string{}
	}
	return Choice{Index: i, Content: pieces, FinishReason: finish}
}

// fullText returns the uncut content pieces of a text choice.
func (g *generation) fullText(r *rng) []string {
	var b pieceBuilder
	switch {
	case g.format == protocol.FormatJSONSchema && g.respSchema != nil:
		appendSchemaInstance(&b, r, g.respSchema)
	case g.format == protocol.FormatJSONObject || g.format == protocol.FormatJSONSchema:
		key, text := "answer", ""
		if g.in.Behavior == BehaviorEcho {
			key, text = "echo", g.echoBody
		} else {
			var prose pieceBuilder
			appendProse(&prose, r, g.defaultTokens, g.lead())
			text = string(prose.buf)
		}
		b.add("{")
		b.buf = protocol.AppendString(b.buf, key)
		b.cut()
		b.add(":")
		b.buf = protocol.AppendString(b.buf, text)
		b.cut()
		b.add("}")
	case g.in.Behavior == BehaviorEcho:
		if !g.hasUser {
			return SplitPieces("echo:")
		}
		return SplitPieces("echo: " + g.echoBody)
	default:
		appendProse(&b, r, g.defaultTokens, g.lead())
	}
	return b.pieces()
}

// lead is the fixed opening of mock-tools' answer to a tool result.
func (g *generation) lead() string {
	if g.in.Behavior == BehaviorTools && g.afterTool {
		return toolResultLead
	}
	return ""
}

// toolChoice generates the calls of one choice. All arguments are generated before the budget
// is applied, so a budget only cuts fragments and never changes them.
func (g *generation) toolChoice(i int, r *rng) Choice {
	var b pieceBuilder
	ends := make([]int, len(g.calls)) // piece index where each call's arguments end
	for k := range g.calls {
		appendSchemaInstance(&b, r, g.argSchemas[k])
		ends[k] = len(b.ends)
	}
	all := b.pieces()

	budget := g.req.MaxTokens
	finish := finishToolCalls
	calls := make([]ToolCall, 0, len(g.calls))
	start := 0
	for k, t := range g.calls {
		args := all[start:ends[k]:ends[k]]
		if budget > 0 {
			left := budget - start
			if left <= 0 && k > 0 {
				finish = finishLength
				break
			}
			if left < len(args) {
				args, finish = args[:max(left, 0)], finishLength
			}
		}
		calls = append(calls, ToolCall{
			ID:        toolCallID(g.requestSeed(), i, k),
			Name:      g.req.Tools[t].Name,
			Arguments: args,
		})
		start = ends[k]
	}
	return Choice{Index: i, ToolCalls: calls, FinishReason: finish}
}

// toolCallID derives a call id from the request, the choice and the call's position.
func toolCallID(seed [32]byte, choice, call int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	sum := subSeed(seed, "call", uint64(choice), uint64(call))
	var id [5 + 24]byte
	copy(id[:], "call_")
	for j := range 24 {
		id[5+j] = alphabet[int(sum[j])%len(alphabet)]
	}
	return string(id[:])
}

// cutAtStop cuts the text at the earliest occurrence of any stop string. The pieces before the
// cut are kept as they are, the piece holding the cut is truncated (and dropped if nothing of it
// is left), so a stop never changes the words before it.
func cutAtStop(pieces []string, stops []string) []string {
	if len(stops) == 0 || len(pieces) == 0 {
		return pieces
	}
	text := strings.Join(pieces, "")
	cut := -1
	for _, s := range stops {
		if i := strings.Index(text, s); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut < 0 {
		return pieces
	}
	pos := 0
	for k, p := range pieces {
		if cut < pos+len(p) {
			if cut == pos {
				return pieces[:k]
			}
			pieces[k] = p[:cut-pos]
			return pieces[:k+1]
		}
		pos += len(p)
	}
	return pieces
}
