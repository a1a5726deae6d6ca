package protocol

import (
	"encoding/base64"
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
)

// The contents of a Gemini request, their parts, the system instruction and the function
// declarations, and the chat messages and tools they become (decode_google.go has the
// translation).

// GoogleSkipSignature is the thoughtSignature Gemini CLI puts on a function call it made up
// itself (one the model did not send): Google accepts it without a check, and so does the mock.
const GoogleSkipSignature = "skip_thought_signature_validator"

// contents decodes the conversation: each content becomes one message of its role, and a user
// content's functionResponse parts a tool message each after it.
func (c *googleState) contents(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	msgs := make([]Message, 0, len(items)+1)
	model := -1 // the last model content's message, whose calls the next function responses answer
	for i, it := range items {
		t := &googleTurn{index: i, req: c.req, before: msgs, model: model}
		n := len(msgs)
		if msgs, e = t.read(msgs, indexPath(path, i), it); e != nil {
			return e
		}
		if n < len(msgs) && msgs[n].Role == roleAssistant {
			model = n
		}
	}
	c.req.Messages = msgs
	return nil
}

// readSystem is the system instruction: a content whose parts' text is the system message
// (the SDKs send role user in it, which means nothing there).
func (c *googleState) readSystem(path, v string) *apierr.Error {
	t := googleTurn{req: c.req, system: true}
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	if e := googleContentObject.walk(&t, path, o); e != nil {
		return e
	}
	c.system = []Message{{Role: roleSystem, Content: t.text.String()}}
	return nil
}

// googleTurn is one content being decoded. before are the messages of the contents before it,
// where a function response finds the call it answers.
type googleTurn struct {
	index   int
	role    string
	system  bool
	req     *Request
	text    strings.Builder
	calls   []ToolCall
	results []Message
	before  []Message
	model   int          // the index in before of the last model content, -1 for none
	pairs   *callPairing // its calls, indexed once this content's first function response comes
}

// callPairing is how a content's function responses find their calls in the model content
// before it, each in constant time: a body of many calls and responses costs what it holds.
type callPairing struct {
	ids      map[string]bool     // every call's id
	byName   map[string][]string // the ids of the calls of each name, in order, not yet answered
	answered map[string]bool
}

var googleContentObject = objectSpec[*googleTurn]{fields: decodeGoogleContent}

func (t *googleTurn) read(msgs []Message, path, v string) ([]Message, *apierr.Error) {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return nil, e
	}
	t.role = roleUser // Google's default for a content without a role
	if raw, ok := o.get("role"); ok {
		role, e := asEnum(joinPath(path, "role"), raw, "user", "model", "function")
		if e != nil {
			return nil, e
		}
		if role == "model" {
			t.role = roleAssistant
		}
	}
	if e := googleContentObject.walk(t, path, o); e != nil {
		return nil, e
	}
	if t.role != roleUser || t.text.Len() > 0 || len(t.results) == 0 {
		msgs = append(msgs, Message{Role: t.role, Content: t.text.String(), ToolCalls: t.calls})
	}
	return append(msgs, t.results...), nil
}

func decodeGoogleContent(t *googleTurn, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "role":
		if t.system {
			return noEffect, valid(asString(p, v))
		}
		return discriminator, nil
	case "parts":
		var room stackElements
		items, e := asArray(room[:0], p, v)
		if e == nil && len(items) == 0 && !t.system {
			e = errValue(p, "must contain at least one part")
		}
		for i := 0; e == nil && i < len(items); i++ {
			e = t.part(i, indexPath(p, i), items[i])
		}
		return supported, e
	}
	return unknown, nil
}

// googlePart is a part being decoded: which data member it holds, and where its thought
// signature goes.
type googlePart struct {
	t         *googleTurn
	index     int
	data      string // the data member's name
	thought   bool
	signature string
	call      *ToolCall
	text      string
}

var googlePartObject = objectSpec[*googlePart]{fields: decodeGooglePart}

// part decodes one part: exactly one data member (text, inlineData, fileData, functionCall,
// functionResponse), with thought and thoughtSignature beside it.
func (t *googleTurn) part(index int, path, v string) *apierr.Error {
	pt := googlePart{t: t, index: index}
	if e := googlePartObject.decode(&pt, path, v); e != nil {
		return e
	}
	if pt.data == "" {
		return errValue(path, "must hold one of text, inlineData, fileData, functionCall, functionResponse")
	}
	if !pt.thought {
		t.text.WriteString(pt.text)
	}
	if pt.call != nil && pt.signature != "" && pt.signature != GoogleSkipSignature {
		r := t.req.reasoning()
		r.SentThinking = append(r.SentThinking, SentThinking{Turn: t.index, Block: index, Digest: ThinkingDigest(pt.call.Name), Seal: pt.signature})
	}
	return nil
}

// setData names the part's data member, refusing a second one.
func (pt *googlePart) setData(p, name string) *apierr.Error {
	if pt.data != "" {
		return errValue(p, "a part holds one of text, inlineData, fileData, functionCall, functionResponse")
	}
	pt.data = name
	return nil
}

func decodeGooglePart(pt *googlePart, k, p, v string) (fieldClass, *apierr.Error) {
	t := pt.t
	key := googleKey(k)
	switch key {
	case "text":
		if e := pt.setData(p, key); e != nil {
			return supported, e
		}
		return supported, into(&pt.text)(asString(p, v))
	case "thought":
		return supported, into(&pt.thought)(asBool(p, v))
	case "thoughtSignature":
		s, e := asString(p, v)
		if e == nil && s != GoogleSkipSignature {
			if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				e = errValue(p, "must be base64")
			}
		}
		pt.signature = s
		return supported, e
	case "inlineData", "fileData":
		if e := pt.setData(p, key); e != nil {
			return supported, e
		}
		if t.system || t.role == roleAssistant {
			return unsupported, errUnsupported(p, "media is read in user contents only")
		}
		var b googleBlob
		if e := googleBlobObject.decode(&b, p, v); e != nil {
			return supported, e
		}
		a := t.req.attachments()
		if strings.HasPrefix(b.mime, "image/") {
			a.Images = append(a.Images, ImageSize{})
		} else {
			a.PDFBytes = append(a.PDFBytes, b.size)
		}
		return supported, nil
	case "functionCall":
		if e := pt.setData(p, key); e != nil {
			return supported, e
		}
		if t.role != roleAssistant {
			return supported, errValue(p, "a function call is a model content's")
		}
		t.calls = append(t.calls, ToolCall{})
		pt.call = &t.calls[len(t.calls)-1]
		if e := googleFunctionCallObject.decode(pt.call, p, v); e != nil {
			return supported, e
		}
		if pt.call.ID == "" {
			pt.call.ID = googleCallID(t.index, len(t.calls)-1)
		}
		return supported, nil
	case "functionResponse":
		if e := pt.setData(p, key); e != nil {
			return supported, e
		}
		if t.role != roleUser {
			return supported, errValue(p, "a function response is a user content's")
		}
		m := Message{Role: roleTool}
		if e := googleFunctionResponseObject.decode(&m, p, v); e != nil {
			return supported, e
		}
		if e := t.answers(p, &m); e != nil {
			return supported, e
		}
		t.results = append(t.results, m)
		return supported, nil
	case "videoMetadata", "partMetadata":
		return noEffect, isObject(p, v)
	case "mediaResolution":
		return noEffect, valid(asString(p, v))
	case "executableCode", "codeExecutionResult":
		return unsupported, errUnsupported(p, noGoogleServerTools)
	}
	return unknown, nil
}

// googleCallID is the id a function call without one gets: its place in the conversation, so
// that its response finds it (answers) and a fixture's conditions read it as any call id.
func googleCallID(turn, k int) string {
	return "call_" + strconv.Itoa(turn) + "_" + strconv.Itoa(k)
}

// answers finds the call a function response answers in the last model content: by its id,
// else the first call of its name not answered yet (Google pairs them by name).
func (t *googleTurn) answers(path string, m *Message) *apierr.Error {
	if t.model < 0 {
		return errValue(joinPath(path, "name"), "must name a function call of the model content before it")
	}
	pr := t.pairs
	if pr == nil {
		calls := t.before[t.model].ToolCalls
		pr = &callPairing{ids: make(map[string]bool, len(calls)), byName: map[string][]string{}, answered: map[string]bool{}}
		for _, c := range calls {
			pr.ids[c.ID] = true
			pr.byName[c.Name] = append(pr.byName[c.Name], c.ID)
		}
		t.pairs = pr
	}
	if m.ToolCallID != "" {
		if !pr.ids[m.ToolCallID] {
			return errValue(joinPath(path, "name"), "must name a function call of the model content before it")
		}
		pr.answered[m.ToolCallID] = true
		return nil
	}
	q := pr.byName[m.Name]
	for len(q) > 0 && pr.answered[q[0]] {
		q = q[1:]
	}
	if len(q) == 0 {
		pr.byName[m.Name] = q
		return errValue(joinPath(path, "name"), "must name a function call of the model content before it")
	}
	m.ToolCallID, pr.answered[q[0]], pr.byName[m.Name] = q[0], true, q[1:]
	return nil
}

var googleFunctionCallObject = objectSpec[*ToolCall]{fields: decodeGoogleFunctionCall, required: []string{"name"}}

func decodeGoogleFunctionCall(c *ToolCall, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "id":
		return supported, into(&c.ID)(asString(p, v))
	case "name":
		return supported, into(&c.Name)(asGoogleName(p, v))
	case "args":
		args, e := asCompactObject(p, v)
		c.Arguments = string(args)
		return supported, e
	case "partialArgs", "willContinue":
		return noEffect, nil
	}
	return unknown, nil
}

var googleFunctionResponseObject = objectSpec[*Message]{fields: decodeGoogleFunctionResponse, required: []string{"name", "response"}}

// decodeGoogleFunctionResponse: the response object is the tool's result, as the chat request's
// tool message content.
func decodeGoogleFunctionResponse(m *Message, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "id":
		return supported, into(&m.ToolCallID)(asString(p, v))
	case "name":
		return supported, into(&m.Name)(asGoogleName(p, v))
	case "response":
		r, e := asCompactObject(p, v)
		m.Content = string(r)
		return supported, e
	case "parts":
		return noEffect, isArray(p, v)
	case "willContinue":
		return noEffect, valid(asBool(p, v))
	case "scheduling":
		return noEffect, valid(asEnum(p, v, "SCHEDULING_UNSPECIFIED", "SILENT", "WHEN_IDLE", "INTERRUPT"))
	}
	return unknown, nil
}

// googleBlob is an inlineData or fileData as read: its members come in any order (data before
// mimeType, as the walk sorts them), so it is counted once whole. An image counts as one of
// unknown size, any other file as a document of its decoded size (unknown for a URI), as the
// estimator counts.
type googleBlob struct {
	mime string
	size int
}

var googleBlobObject = objectSpec[*googleBlob]{fields: decodeGoogleBlob, required: []string{"mimeType"}}

func decodeGoogleBlob(b *googleBlob, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "mimeType":
		return supported, into(&b.mime)(asString(p, v))
	case "data":
		s, e := asString(p, v)
		if e == nil {
			var ok bool
			if b.size, ok = base64Len(s); !ok {
				e = errValue(p, "must be base64")
			}
		}
		return supported, e
	case "fileUri", "displayName":
		return supported, valid(asString(p, v))
	}
	return unknown, nil
}

// base64Len is the decoded length of base64 text (standard or URL-safe, padded or not).
func base64Len(s string) (int, bool) {
	s = strings.TrimRight(s, "=")
	if _, err := base64.RawStdEncoding.DecodeString(s); err != nil {
		if _, err := base64.RawURLEncoding.DecodeString(s); err != nil {
			return 0, false
		}
	}
	return len(s) * 3 / 4, true
}

// tools decodes the tools offered: every functionDeclarations entry's functions, in order.
// Google's own tools (search, code execution, …) are refused: the mock runs none.
func (c *googleState) tools(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	c.note("tools")
	for i, it := range items {
		if e := googleToolObject.decode(c, indexPath(path, i), it); e != nil {
			return e
		}
	}
	return nil
}

var googleToolObject = objectSpec[*googleState]{fields: decodeGoogleTool}

func decodeGoogleTool(c *googleState, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "functionDeclarations":
		var room stackElements
		items, e := asArray(room[:0], p, v)
		for i := 0; e == nil && i < len(items); i++ {
			c.req.Tools = append(c.req.Tools, Tool{})
			t := &c.req.Tools[len(c.req.Tools)-1]
			ip := indexPath(p, i)
			if e = googleFunctionDeclarationObject.decode(t, ip, items[i]); e == nil {
				e = CheckSchemaPatterns(joinPath(ip, "parameters"), t.Parameters, c.lim.MaxRegexProgram)
			}
		}
		return supported, e
	case "googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext", "googleMaps",
		"computerUse", "fileSearch", "retrieval", "enterpriseWebSearch", "mcpServers":
		return unsupported, errUnsupported(p, noGoogleServerTools)
	}
	return unknown, nil
}

var googleFunctionDeclarationObject = objectSpec[*Tool]{fields: decodeGoogleFunctionDeclaration, required: []string{"name"}}

// decodeGoogleFunctionDeclaration: parametersJsonSchema is JSON Schema as it is; parameters is
// Google's OpenAPI subset (the Go SDK's form), made JSON Schema for the generator.
func decodeGoogleFunctionDeclaration(t *Tool, k, p, v string) (fieldClass, *apierr.Error) {
	switch key := googleKey(k); key {
	case "name":
		return supported, into(&t.Name)(asGoogleName(p, v))
	case "description":
		return supported, into(&t.Description)(asString(p, v))
	case "parameters", "parametersJsonSchema":
		if t.Parameters != nil {
			return supported, errValue(p, "only one of parameters and parametersJsonSchema may be set")
		}
		// The limits first, on the schema as sent: they bound its nesting, and so the rewrite's
		// depth and cost (linear in the body's bytes).
		s, e := asCompactObject(p, v)
		if e == nil {
			e = CheckSchemaLimits(p, s)
		}
		if e == nil && key == "parameters" {
			s, e = openAPISchema(p, s)
		}
		t.Parameters = s
		return supported, e
	case "response", "responseJsonSchema":
		return noEffect, isObject(p, v)
	case "behavior":
		return noEffect, valid(asEnum(p, v, "UNSPECIFIED", "BLOCKING", "NON_BLOCKING"))
	}
	return unknown, nil
}

// asGoogleName is a function's name as Google's API allows it: a letter or an underscore first,
// then letters, digits, underscores, dots, colons and dashes, at most 128.
func asGoogleName(path, v string) (string, *apierr.Error) {
	s, e := asString(path, v)
	if e != nil {
		return "", e
	}
	ok := len(s) >= 1 && len(s) <= 128 && (s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-'
	}
	if !ok {
		return "", errValue(path, "must start with a letter or an underscore and be at most 128 characters of a-z, A-Z, 0-9, underscores, dots, colons and dashes")
	}
	return s, nil
}
