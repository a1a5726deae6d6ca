package protocol

import (
	"crypto/sha256"
	"slices"
	"strings"

	"mockgateway/internal/apierr"
)

// The messages of a Messages request and their content blocks, and the chat messages they
// become (decode_anthropic.go has the translation).

// messages decodes the conversation: each turn becomes one message of its role, and a user
// turn's tool_result blocks a tool message each after it.
func (c *anthropicState) messages(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	if len(items) == 0 {
		return errValue(path, "must contain at least one message")
	}
	msgs := make([]Message, 0, len(items)+1)
	for i, it := range items {
		t := &anthropicTurn{index: i, before: msgs, req: c.req}
		if msgs, e = t.read(msgs, indexPath(path, i), it); e != nil {
			return e
		}
		c.noteThinking(t)
	}
	c.req.Messages = msgs
	return nil
}

// noteThinking keeps what a reasoning model checks of an assistant turn (thinking.go in
// internal/server): its thinking blocks, and whether it is the last turn to call tools.
func (c *anthropicState) noteThinking(t *anthropicTurn) {
	if t.role != roleAssistant {
		return
	}
	c.lastAssistant = nil
	if t.toolUse {
		c.lastAssistant = &AssistantTurn{Turn: t.index, FirstBlock: t.first}
	}
	if len(t.thinking) > 0 {
		r := c.req.reasoning()
		r.SentThinking = append(r.SentThinking, t.thinking...)
	}
}

// readSystem is the system prompt, a string or text blocks: a system message before the
// conversation (finish puts it there; messages come first in the key order).
func (c *anthropicState) readSystem(path, v string) *apierr.Error {
	t := anthropicTurn{role: roleSystem, req: c.req}
	if e := t.content(path, v); e != nil {
		return e
	}
	c.system = []Message{{Role: roleSystem, Content: t.text.String()}}
	return nil
}

// anthropicTurn is one message of the conversation being decoded: its role, its text, the tool
// calls of an assistant turn and the tool results of a user turn. before are the messages of
// the turns before it, where a tool result finds the call it answers.
type anthropicTurn struct {
	role    string
	req     *Request // the request being decoded, which its attachments go to
	text    strings.Builder
	calls   []ToolCall
	results []Message
	before  []Message
	// result is the content of the tool_result block being decoded, read once the block's key
	// pass is done (block), not from inside it: its blocks nested in the pass doubled a parked
	// stream's stack (TestParkedStreamStack, docs/performance.md).
	result string
	// index is the turn's place in messages; first its first block's type, toolUse whether it
	// holds a tool_use block, thinking its thinking blocks (an assistant turn's).
	index    int
	first    string
	toolUse  bool
	thinking []SentThinking
	// inResult marks the blocks of a tool_result's content, which may not hold another
	// tool_result: refused as its type is read, so that the blocks nest at most one level, and
	// decoding them costs their bytes whatever a client sends (TestDecodeCostIsLinearInDepth).
	inResult bool
}

var anthropicTurnObject = objectSpec[*anthropicTurn]{fields: decodeAnthropicTurn, required: []string{"content"}}

// read decodes the turn v and appends its messages to msgs.
func (t *anthropicTurn) read(msgs []Message, path, v string) ([]Message, *apierr.Error) {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return nil, e
	}
	role, rolePath, e := readDiscriminator(path, o, "role")
	if e != nil {
		return nil, e
	}
	switch role {
	case roleUser, roleAssistant:
	case roleSystem:
		// Not in Anthropic's API, but Claude Code sends its environment so, after the user's
		// first message: kept where it stands, as a system message (docs/protocol.md).
	default:
		return nil, errValue(rolePath, "must be one of user, assistant")
	}
	t.role = role
	if e := anthropicTurnObject.walk(t, path, o); e != nil {
		return nil, e
	}
	if role != roleUser || t.text.Len() > 0 || len(t.results) == 0 {
		msgs = append(msgs, Message{Role: role, Content: t.text.String(), ToolCalls: t.calls})
	}
	return append(msgs, t.results...), nil
}

func decodeAnthropicTurn(t *anthropicTurn, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "role":
		return discriminator, nil
	case "content":
		return supported, t.content(p, v)
	}
	return unknown, nil
}

// content is a string, or an array of content blocks.
func (t *anthropicTurn) content(path, v string) *apierr.Error {
	switch jsonKind(v) {
	case '"':
		s, e := asString(path, v)
		t.text.WriteString(s)
		if t.first == "" {
			t.first = "text"
		}
		return e
	case '[':
	default:
		return errType(path, "a string or an array of content blocks")
	}
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	for i, it := range items {
		if e := t.block(i, indexPath(path, i), it); e != nil {
			return e
		}
	}
	return nil
}

// blockState is a content block being decoded: its type and the turn it belongs to.
type blockState struct {
	typ  string
	turn *anthropicTurn
	call *ToolCall     // a tool_use block's
	out  *Message      // a tool_result block's
	sent *SentThinking // a thinking or redacted_thinking block's
}

// The required members of the content blocks, by type; which types a turn may hold depends on
// its role. (The blocks' objects are made in block: a tool_result's content holds blocks too,
// and package-level objects would refer to themselves.)
var (
	textBlockRequired       = []string{"text"}
	sourceBlockRequired     = []string{"source"}
	toolUseBlockRequired    = []string{"id", "input", "name"}
	toolResultBlockRequired = []string{"tool_use_id"}
	thinkingBlockRequired   = []string{"signature", "thinking"}
	redactedBlockRequired   = []string{"data"}
	searchResultRequired    = []string{"content", "source", "title"}
)

func (t *anthropicTurn) block(index int, path, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	b := blockState{typ: typ, turn: t}
	if t.first == "" {
		t.first = typ
	}
	var required []string
	user, assistant := t.role == roleUser, t.role == roleAssistant
	switch {
	case typ == "text":
		required = textBlockRequired
	case t.inResult && typ != "image" && typ != "document" && typ != "search_result":
		// A tool result's content blocks, as Anthropic's ToolResultBlockParam lists them.
		return errValue(typePath, "must be one of text, image, search_result, document")
	case (typ == "image" || typ == "document") && user:
		required = sourceBlockRequired
	case typ == "search_result" && user:
		required = searchResultRequired
	case typ == "tool_result" && user:
		t.results = append(t.results, Message{Role: roleTool})
		b.out, required = &t.results[len(t.results)-1], toolResultBlockRequired
	case typ == "tool_use" && assistant:
		t.calls = append(t.calls, ToolCall{})
		b.call, required = &t.calls[len(t.calls)-1], toolUseBlockRequired
		t.toolUse = true
	case typ == "thinking" && assistant:
		b.sent, required = t.sentThinking(index, false), thinkingBlockRequired
	case typ == "redacted_thinking" && assistant:
		b.sent, required = t.sentThinking(index, true), redactedBlockRequired
	case user:
		return errValue(typePath, "must be one of text, image, document, search_result, tool_result")
	case assistant:
		return errValue(typePath, "must be one of text, tool_use, thinking, redacted_thinking")
	default:
		return errValue(typePath, "must be text")
	}
	spec := objectSpec[blockState]{fields: decodeBlock, required: required}
	if e := spec.walk(b, path, o); e != nil {
		return e
	}
	if b.out == nil {
		return nil
	}
	if t.result != "" {
		raw := t.result
		t.result = ""
		if e := t.resultContent(b.out, joinPath(path, "content"), raw); e != nil {
			return e
		}
	}
	return t.answers(joinPath(path, "tool_use_id"), b.out.ToolCallID)
}

// resultContent is a tool result's content: a string, or blocks whose text is the result
// (images and documents are the request's attachments, as in a turn).
func (t *anthropicTurn) resultContent(m *Message, path, v string) *apierr.Error {
	r := anthropicTurn{role: roleUser, req: t.req, inResult: true}
	e := r.content(path, v)
	m.Content = r.text.String()
	return e
}

// answers checks that a tool result answers a tool_use of the latest assistant turn, as
// Anthropic requires.
func (t *anthropicTurn) answers(path, id string) *apierr.Error {
	for i := len(t.before) - 1; i >= 0; i-- {
		if m := &t.before[i]; m.Role == roleAssistant {
			if slices.ContainsFunc(m.ToolCalls, func(c ToolCall) bool { return c.ID == id }) {
				return nil
			}
			break
		}
	}
	return errValue(path, "must name a tool_use block of the assistant message before it")
}

func decodeBlock(b blockState, k, p, v string) (fieldClass, *apierr.Error) {
	switch {
	case k == "type":
		return discriminator, nil
	case k == "cache_control" && b.typ != "thinking" && b.typ != "redacted_thinking":
		return noEffect, cacheControlObject.decode(none{}, p, v)
	case k == "text" && b.typ == "text":
		s, e := asString(p, v)
		b.turn.text.WriteString(s)
		return supported, e
	case k == "citations" && (b.typ == "text" || b.typ == "search_result" || b.typ == "document"):
		// Sent back as the API gave them (a text block's list), or asked for ({enabled}).
		if jsonKind(v) == '[' {
			return noEffect, nil
		}
		return noEffect, citationsObject.decode(none{}, p, v)
	case k == "source" && (b.typ == "image" || b.typ == "document"):
		return supported, b.turn.readSource(b.typ == "image", p, v)
	case k == "content" && b.typ == "search_result":
		return supported, b.turn.readSearchContent(p, v)
	case (k == "title" || k == "context") && b.typ == "document":
		return noEffect, valid(asString(p, v))
	case b.typ == "search_result":
		return decodeSearchResult(k, p, v)
	case b.typ == "tool_use":
		return decodeToolUse(b.call, k, p, v)
	case b.typ == "tool_result":
		return decodeToolResult(b, k, p, v)
	case k == "thinking" && b.typ == "thinking":
		s, e := asString(p, v)
		b.sent.digest(s)
		return supported, e
	case k == "signature" && b.typ == "thinking", k == "data" && b.typ == "redacted_thinking":
		s, e := asString(p, v)
		b.sent.Seal = s
		return supported, e
	}
	return unknown, nil
}

func decodeSearchResult(k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "source", "title":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

func decodeToolUse(c *ToolCall, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "id":
		s, e := asString(p, v)
		if e == nil && s == "" {
			e = errValue(p, "must not be empty")
		}
		c.ID = s
		return supported, e
	case "name":
		return supported, into(&c.Name)(asName(p, v))
	case "input":
		args, e := asCompactObject(p, v)
		c.Arguments = string(args)
		return supported, e
	}
	return unknown, nil
}

func decodeToolResult(b blockState, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "tool_use_id":
		return supported, into(&b.out.ToolCallID)(asString(p, v))
	case "content":
		// Its type now, in the key order; its blocks once the pass is done (block).
		switch jsonKind(v) {
		case '"', '[':
			b.turn.result = v
			return supported, nil
		}
		return supported, errType(p, "a string or an array of content blocks")
	case "is_error":
		return noEffect, valid(asBool(p, v))
	}
	return unknown, nil
}

var cacheControlObject = objectSpec[none]{fields: decodeCacheControl, required: []string{"type"}}

// decodeCacheControl is a prompt-caching breakpoint: the mock caches nothing, and reports no
// cached tokens.
func decodeCacheControl(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return noEffect, valid(asEnum(p, v, "ephemeral"))
	case "ttl":
		return noEffect, valid(asEnum(p, v, "5m", "1h"))
	}
	return unknown, nil
}

var citationsObject = objectSpec[none]{fields: decodeCitations}

func decodeCitations(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "enabled":
		return noEffect, valid(asBool(p, v))
	}
	return unknown, nil
}

// ThinkingDigest is what a thinking block's signature binds: a digest of its text, so that a
// changed text fails and the text itself need not be kept.
func ThinkingDigest(text string) [32]byte { return sha256.Sum256([]byte(text)) }

// digest sets the block's digest of text. It is a frame of its own: in decodeBlock, which
// nested tool results reenter, the hash's state grew a parked stream's stack
// (TestParkedStreamStack).
//
//go:noinline
func (s *SentThinking) digest(text string) { s.Digest = ThinkingDigest(text) }

// sentThinking adds a thinking block of the turn (its block index), to be read into. A frame of
// its own, as digest.
//
//go:noinline
func (t *anthropicTurn) sentThinking(index int, redacted bool) *SentThinking {
	t.thinking = append(t.thinking, SentThinking{Turn: t.index, Block: index, Redacted: redacted})
	return &t.thinking[len(t.thinking)-1]
}
