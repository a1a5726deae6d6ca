package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"mockgateway/internal/jsonenc"
)

// TestEchoedInKeyOrder: echoOf finds the echoed members in one pass over the top level's, which
// are in key order, so echoed must be too; and each is a member the decoder accepts.
func TestEchoedInKeyOrder(t *testing.T) {
	for n, m := range echoed {
		if n > 0 && echoed[n-1].key >= m.key {
			t.Errorf("%s after %s: echoed must be in strictly increasing key order", m.key, echoed[n-1].key)
		}
		if responsesFieldIndex(m.key) < 0 {
			t.Errorf("%s is echoed but not a member the decoder accepts", m.key)
		}
	}
}

// TestDefaultEcho: a request that sends no echoed member and no tool shares defaultEcho, whose
// bytes are those of a request that sends each member at the value OpenAI echoes for its absence.
func TestDefaultEcho(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"stream":true,"store":false}`,
		`{"model":"m","input":"hi","tools":[],"include":[],"service_tier":"auto","background":false,"prompt_cache_retention":"24h"}`,
		`{"model":"m","input":"hi","instructions":null,"metadata":null,"user":null,"tools":null}`,
	} {
		_, echo, e := DecodeResponsesRequest([]byte(body), Limits{})
		if e != nil {
			t.Fatalf("%s: %v", body, e)
		}
		if echo != defaultEcho {
			t.Errorf("%s: echoed %s, not the shared default", body, echo.members)
		}
	}
	sent := `{"model":"m","input":"hi","metadata":{},"parallel_tool_calls":true,"temperature":1,` +
		`"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","top_logprobs":0,"top_p":1,"truncation":"disabled"}`
	_, echo, e := DecodeResponsesRequest([]byte(sent), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if echo == defaultEcho || !bytes.Equal(echo.members, defaultEcho.members) {
		t.Errorf("the defaults sent echo\n%s\nthe shared default is\n%s", echo.members, defaultEcho.members)
	}
}

// TestResponsesDecodeAllocations holds the Responses decoder to what a clean request must cost,
// as TestDecodeAllocations holds the chat one: the copy of the body, the request (with its
// decoding state), its slices, and the echo and its bytes when the request sends a member the
// answer echoes. A string input, an input item and a content part cost what a chat message costs.
// (The agents' request is left out: its indented tool parameters are compacted by code whose
// allocations differ under the race detector.)
func TestResponsesDecodeAllocations(t *testing.T) {
	bodies := responsesBenchBodies(t)
	bodies["content part"] = `{"model":"mock-echo","input":[{"role":"user","content":[{"type":"input_text","text":"the quick brown fox"}]}]}`
	for _, tc := range []struct {
		name string
		want float64
	}{{"string", 3}, {"item", 3}, {"content part", 3}, {"tools", 12}} {
		body := []byte(bodies[tc.name])
		if n := testing.AllocsPerRun(50, func() { _, _, _ = DecodeResponsesRequest(body, Limits{}) }); n > tc.want {
			t.Errorf("%s: %v allocations, want %v", tc.name, n, tc.want)
		}
	}
	chat := []byte(benchBodies["chat"])
	responses := []byte(bodies["string"])
	if c, r := testing.AllocsPerRun(50, func() { _, _ = DecodeChatRequest(chat, Limits{}) }),
		testing.AllocsPerRun(50, func() { _, _, _ = DecodeResponsesRequest(responses, Limits{}) }); r > c {
		t.Errorf("a string input costs %v allocations, its chat message %v", r, c)
	}
}

// FuzzEchoAsBefore: the echo of any request the decoder accepts is what it was when the top level
// was split a second time, from the body's bytes, and every member looked up in it (echoAsBefore,
// the code before echoOf): the same bytes from one split and one pass.
func FuzzEchoAsBefore(f *testing.F) {
	for _, c := range pinnedResponsesTable {
		f.Add([]byte(c.body))
	}
	for _, c := range recordedClientBodies(f) {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, echo, e := DecodeResponsesRequest(body, Limits{})
		if e != nil {
			return
		}
		if want := echoAsBefore(body, r); !bytes.Equal(echo.members, want) {
			t.Fatalf("%s\necho\n%s\nbefore\n%s", body, echo.members, want)
		}
	})
}

// echoAsBefore is the echo as encode_responses.go made it before echoOf: kept as the reference
// FuzzEchoAsBefore holds echoOf to.
func echoAsBefore(body []byte, req *Request) []byte {
	top, _ := appendMembers(members[json.RawMessage]{}, json.RawMessage(body), string(body))
	b := make([]byte, 0, 512)
	raw := func(key, absent string) {
		v, ok := top.get(key)
		if !ok && absent == "" {
			return
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		if ok {
			b = withoutNullsAsBefore(b, v, 2)
			return
		}
		b = append(b, absent...)
	}
	raw("instructions", "null")
	raw("max_output_tokens", "null")
	raw("max_tool_calls", "null")
	raw("metadata", "{}")
	b = append(b, `,"parallel_tool_calls":`...)
	b = strconv.AppendBool(b, req.ParallelToolCalls)
	raw("prompt_cache_key", "null")
	raw("reasoning", `{"effort":null,"summary":null}`)
	raw("safety_identifier", "null")
	raw("temperature", "1")
	raw("text", `{"format":{"type":"text"},"verbosity":"medium"}`)
	raw("tool_choice", `"auto"`)
	raw("top_logprobs", "0")
	raw("top_p", "1")
	raw("truncation", `"disabled"`)
	raw("user", "")
	b = append(b, `,"tools":`...)
	var items []json.RawMessage
	if v, ok := top.get("tools"); ok {
		items, _ = splitArray(v)
	}
	b = append(b, '[')
	// The tools as they were sent: the function tools as decoded, the others (web search,
	// namespaces) as they came.
	fn := 0
	for i, it := range items {
		if o, _ := splitObject(it); !isFunctionTool(o) {
			if i > 0 {
				b = append(b, ',')
			}
			b = withoutNullsAsBefore(b, it, 2)
			continue
		}
		if fn == len(req.Tools) {
			break
		}
		tool := &req.Tools[fn]
		fn++
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","name":`...)
		b = jsonenc.AppendString(b, tool.Name)
		b = append(b, `,"description":`...)
		if tool.Description != "" {
			b = jsonenc.AppendString(b, tool.Description)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"parameters":`...)
		if tool.Parameters != nil {
			b = append(b, tool.Parameters...)
		} else {
			b = append(b, "null"...)
		}
		strict := true
		if i < len(items) {
			if o, ok := splitObject(items[i]); ok && hasMember(o, "strict") {
				strict = tool.Strict
			}
		}
		b = append(b, `,"strict":`...)
		b = strconv.AppendBool(b, strict)
		b = append(b, '}')
	}
	return append(b, ']')
}

// isFunctionTool reports whether a sent tool is a function tool.
func isFunctionTool(o members[json.RawMessage]) bool {
	raw, ok := o.get("type")
	var typ string
	return ok && json.Unmarshal(raw, &typ) == nil && typ == "function"
}

func withoutNullsAsBefore(buf []byte, v json.RawMessage, levels int) []byte {
	switch kind := jsonKind(v); {
	case levels > 0 && kind == '{':
		o, _ := splitObject(v)
		buf = append(buf, '{')
		for n, f := range o {
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = jsonenc.AppendString(buf, f.key)
			buf = append(buf, ':')
			buf = withoutNullsAsBefore(buf, f.val, levels-1)
		}
		return append(buf, '}')
	case levels > 0 && kind == '[':
		items, _ := splitArray(v)
		buf = append(buf, '[')
		for i, it := range items {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = withoutNullsAsBefore(buf, it, levels-1)
		}
		return append(buf, ']')
	}
	b := bytes.NewBuffer(buf)
	if json.Compact(b, v) != nil {
		return append(buf, "null"...)
	}
	return b.Bytes()
}
