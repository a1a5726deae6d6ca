package generate

import (
	"math"

	"mockgateway/internal/jsonenc"
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
	Request       *protocol.Request

	// TokenCeiling caps the completion tokens of every choice, whatever the model, the format
	// and the default length (--max-tokens); the request's own budget cuts below it. Zero or
	// negative means protocol.DefaultMaxTokensCeiling.
	TokenCeiling int
	// MaxResponseBytes caps the bytes of content and tool arguments of the whole answer: each
	// of the n choices may show an equal share (at least one byte). A piece is one token
	// however long, so the token ceiling alone does not bound bytes. Zero or negative means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int
	// ContextWindow, when positive, also caps each choice at the tokens the window leaves after
	// the prompt, as a provider's model stops there. CheckContext rejects what cannot fit.
	ContextWindow int
	// PromptTokens, when positive, is PromptTokens(Request) as the caller already counted it
	// (for CheckContext), so that a large prompt is not counted twice.
	PromptTokens int
}

// ToolCall is one generated function call.
type ToolCall struct {
	ID        string // "call_" + 24 lowercase alphanumerics, derived from the request
	Name      string
	Arguments Pieces // argument fragments, one token each; joined they are the arguments JSON
}

// Choice is one generated choice.
type Choice struct {
	Index int
	// Content holds the content pieces, one token each; joined they are the message content. It
	// is nil (IsNil) when the choice calls tools or is lazy (see Lazy), and not nil (possibly
	// empty) otherwise.
	Content   Pieces
	ToolCalls []ToolCall // nil unless the choice calls tools
	// Refusal holds the pieces of a fixture's refusal (Script); its Content is nil then.
	Refusal Pieces
	// FinishReason is "stop", "length" or "tool_calls". A lazy choice has it once it is settled
	// (see Lazy), "" before.
	FinishReason string
	// StopSequence is the request's stop string that ended the text, "" when none did (a lazy
	// choice has no stop strings).
	StopSequence string

	lazy *lazyProse // the cursor of a lazy choice (Prepare), nil otherwise
}

// Text returns the message content (of a choice that is not lazy).
func (c Choice) Text() string { return c.Content.Text() }

// Tokens returns the completion tokens of the choice: its content pieces plus its argument
// fragments, which is also the number of content or argument deltas a stream emits for it. For
// a lazy choice it is final once the choice is settled, and the pieces read so far before.
func (c Choice) Tokens() int {
	if c.lazy != nil {
		return c.lazy.tokens()
	}
	n := c.Content.Len() + c.Refusal.Len()
	for i := range c.ToolCalls {
		n += c.ToolCalls[i].Arguments.Len()
	}
	return n
}

// Result is a generated completion.
type Result struct {
	Choices      []Choice // len == Request.N (at least 1), Index 0..N-1
	PromptTokens int
	// CompletionTokens is the sum of Tokens() over the choices. In a result of Prepare whose lazy
	// choices are not all settled, it is final only after Settle. A scripted usage (Script)
	// replaces it, and Settle keeps it then.
	CompletionTokens int
	// ReasoningTokens are a reasoning model's, over every choice (Reason); CompletionTokens
	// includes them, as OpenAI counts.
	ReasoningTokens int
	scriptedUsage   bool
}

// ScriptedUsage reports whether the token counts are a fixture's own rather than counted.
func (r *Result) ScriptedUsage() bool { return r.scriptedUsage }

// DropText lets go of every choice's text, keeping its index and finish reason, once the answer
// is encoded: a client that reads it slowly then holds the encoded bytes, not the text as well.
// PromptTokens and CompletionTokens stay; a choice's Tokens is 0 after.
func (r *Result) DropText() {
	for i := range r.Choices {
		c := &r.Choices[i]
		*c = Choice{Index: c.Index, FinishReason: c.FinishReason}
	}
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
	behavior      Behavior
	req           *protocol.Request
	n             int      // the choices
	seed          lazySeed // the request's seed, hashed when first drawn from
	defaultTokens int
	stops         []string

	calls      []int                     // indices into req.Tools of the calls each choice makes; nil: text
	argSchemas [maxParallelCalls]*jvalue // parsed parameters of each call (nil: "{}")
	callsOf    [maxParallelCalls]int     // what calls holds, within the one allocation of g

	format     string  // response_format type, "" for text
	respSchema *jvalue // parsed json_schema schema; nil: any JSON object
	afterTool  bool    // the last message is a tool result
	echoBody   string  // the last user message's content
	hasUser    bool

	promptTokens int
	maxPieces    int // the ceiling of each choice, in pieces and in bytes
	maxBytes     int
	cache        requestCache // shared by the request's schema instances
	scratch      pieceBuilder // shared by the request's choices (builder)
	// An echo answer draws nothing at random, so every choice of it is the same: it is made
	// once and shared (a megabyte of prompt echoed to n = 128 choices is made once).
	fixedText bool
}

// Generate produces the completion of a request. It is a pure function of its input: see the
// package documentation for the exact rules.
func Generate(in Input) Result {
	req := in.Request
	if req == nil {
		req = &protocol.Request{}
	}
	n := max(req.N, 1)
	return newGeneration(in, req, n).result(n)
}

// result makes every choice.
func (g *generation) result(n int) Result {
	res := Result{Choices: make([]Choice, n), PromptTokens: g.promptTokens}
	// One random stream, seeded anew for every choice; none for a fixed text, which draws
	// nothing. It is an allocation of its own: inside the generation it took it over 512 bytes,
	// above which an allocation with pointers costs a type header to write, which showed in an
	// echo's time (BenchmarkGenerateEcho16; TestGenerationStaysSmall holds the size).
	var r *rng
	if !g.fixedText {
		r = new(rng)
	}
	for i := range n {
		var c Choice
		if i > 0 && g.fixedText {
			c = res.Choices[0] // its pieces shared, never changed
			c.Index = i
		} else {
			if r != nil {
				r.seedLater(&g.seed, i)
			}
			c = g.choice(i, r)
		}
		res.Choices[i] = c
		res.CompletionTokens += c.Tokens()
	}
	return res
}

// requestSeed is the request's seed, hashed from all of it on first use: an echo answer draws
// nothing at random, so it never pays for the hash.
func (g *generation) requestSeed() [32]byte { return g.seed.get() }

// newGeneration makes the generation: one allocation, of at most 512 bytes (see result), that
// holds the piece builder the choices share.
func newGeneration(in Input, req *protocol.Request, n int) *generation {
	g := &generation{
		behavior:      in.Behavior,
		req:           req,
		n:             n,
		seed:          lazySeed{model: in.Model, req: req},
		defaultTokens: in.DefaultTokens,
		format:        req.ResponseFormat.Type,
		promptTokens:  in.PromptTokens,
		cache:         freshCache(),
	}
	if g.defaultTokens <= 0 {
		g.defaultTokens = fallbackDefaultTokens
	}
	if g.promptTokens <= 0 {
		g.promptTokens = PromptTokens(req)
	}
	g.maxPieces, g.maxBytes = choiceCeiling(in, g.promptTokens, n)
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
		g.calls = planToolCalls(req, &g.callsOf)
		for k, t := range g.calls {
			if p := req.Tools[t].Parameters; len(p) > 0 {
				g.argSchemas[k], _ = parseJSON(p) // undecodable: nil, i.e. "{}"
			}
		}
	}
	if g.format == protocol.FormatJSONSchema && len(req.ResponseFormat.Schema) > 0 {
		g.respSchema, _ = parseJSON(req.ResponseFormat.Schema) // undecodable: like json_object
	}
	g.fixedText = in.Behavior == BehaviorEcho && g.respSchema == nil
	return g
}

func (g *generation) choice(i int, r *rng) Choice {
	if g.calls != nil {
		return g.toolChoice(i, r)
	}
	b := g.builder(i == g.n-1 || g.fixedText) // a fixed text is made once (result)
	g.fullText(b, r)
	pieces, finish, stop := g.cutTextAt(b.pieces())
	return Choice{Index: i, Content: pieces, FinishReason: finish, StopSequence: stop}
}

// builder returns the request's piece builder, emptied, with the choice's ceiling. The choices
// of a request share it, so its buffers grow once per request rather than once per choice, and
// each choice copies out exactly its own text (pieces): the choices allocate their text's size,
// not the several times it of buffers grown by doubling (BenchmarkHeavyAnswerMemory). last says that no
// choice uses it after this one, which then keeps its buffers (pieceBuilder.handOver).
func (g *generation) builder(last bool) *pieceBuilder {
	b := &g.scratch
	b.buf, b.ends = b.buf[:0], b.ends[:0]
	b.limit(g.maxPieces, g.maxBytes)
	b.handOver = last
	return b
}

// fullText appends the content pieces of a text choice, up to the choice's ceiling.
func (g *generation) fullText(b *pieceBuilder, r *rng) {
	switch {
	case g.format == protocol.FormatJSONSchema && g.respSchema != nil:
		appendSchemaInstance(b, r, g.respSchema, &g.cache)
	case g.format == protocol.FormatJSONObject || g.format == protocol.FormatJSONSchema:
		key, text := "answer", ""
		if g.behavior == BehaviorEcho {
			// The string is one piece: only as much of the prompt as the ceiling can show.
			key, text = "echo", b.clip(g.echoBody)
		} else {
			var prose pieceBuilder
			prose.limit(math.MaxInt, b.room()+1)
			appendProse(&prose, r, g.defaultTokens, g.lead())
			text = string(prose.buf)
		}
		b.reserve(len(`{"":""}`)+len(key)+len(text), 5) // exact unless the text needs escapes
		b.add("{")
		b.buf = jsonenc.AppendString(b.buf, key)
		b.cut()
		b.add(":")
		b.buf = jsonenc.AppendString(b.buf, text)
		b.cut()
		b.add("}")
	case g.behavior == BehaviorEcho:
		b.limit(g.piecesNeeded(), g.maxBytes)
		glue, body := "", ""
		if g.hasUser {
			glue, body = " ", g.echoBody
		}
		b.appendSplit("echo:", glue, body)
	default:
		b.limit(g.piecesNeeded(), g.maxBytes)
		appendProse(b, r, g.defaultTokens, g.lead())
	}
}

// piecesNeeded is how many pieces of a text choice cutText can keep or needs to see: with a
// budget, the budget, plus as many as the longest stop string could span past it (a piece is at
// least a byte; the builder makes one more, to tell a cut); without one, the ceiling. Made
// whole and cut afterwards, a 16-token budget on a 4,096-token model cost the 4,096 tokens
// (TestBudgetGeneratesOnlyWhatItKeeps).
func (g *generation) piecesNeeded() int {
	budget := g.req.MaxTokens
	if budget <= 0 {
		return g.maxPieces
	}
	longest := 0
	for _, s := range g.stops {
		longest = max(longest, len(s))
	}
	return min(g.maxPieces, budget+longest)
}

// lead reports whether the prose opens with the fixed lead of mock-tools' answer to a tool
// result.
func (g *generation) lead() bool { return g.behavior == BehaviorTools && g.afterTool }
