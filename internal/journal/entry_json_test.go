package journal

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"mockgateway/internal/protocol"
)

// reflected is the entry as encoding/json writes it by reflection: MarshalJSON's form before
// AppendJSON, the reference the hand encoder is held to.
func reflected(e Entry) any {
	type fields Entry // the same members without MarshalJSON
	return struct {
		RequestID string `json:"request_id"`
		Time      string `json:"time"`
		fields
	}{e.RequestID, e.Time.UTC().Format(timeLayout), fields(e)}
}

// FuzzAppendJSONMatchesEncodingJSON holds AppendJSON to encoding/json byte for byte (with
// SetEscapeHTML(false)), and json.Marshal of an Entry to its reflected form, escaping included.
func FuzzAppendJSONMatchesEncodingJSON(f *testing.F) {
	f.Add("req_1", int64(1764300000123456789), "scope-1", "POST", "/v1/chat/completions", 200, "", "mock-chat", true, 18, "completed", 0.25, 1.5,
		"stop", 20, 9, 0, "generated", "", 1, "python", "OpenAI/Python 1.109.1", uint64(0), 1, 2, 40, false, "auto", 0.0, "OpenAI Chat Completions")
	f.Add("", int64(0), "", "", "", 0, "rate_limited", "", false, 0, "", 0.0, 0.0, "", 0, 0, 0, "", "error", 0, "", "", uint64(math.MaxUint64), 0, 0, 0, true, "", 1e-7, "")
	f.Add("<id>&", int64(-1), "s\u2028", "\xff", "a\"b\\", -5, "x\ny", "m\tq", false, -1, "\x00", math.NaN(), math.Inf(1), "é", -3, 7, 2, "f<>", "\u2029", -2, "\x7f", "ua & <b>", uint64(5), -1, 3, 1<<40, false, "<none>", 1e21, "Google <Gemini> & \u2028")
	// Fields from real requests: a FieldSet holds only the bits of names the decoder knows.
	fieldSets := []protocol.FieldSet{0, decode(f, oneMessageBody).Fields, decode(f, toolRoundTripBody).Fields}
	f.Fuzz(func(t *testing.T, id string, nanos int64, scope, method, route string, status int, code, model string, stream bool, chunks int, outcome string,
		ttfc, dur float64, finish string, prompt, completion, reasoning int, fixture, fault string, attempt int, lang, ua string,
		fieldBits uint64, users, tools, maxTokens int, names bool, toolChoice string, other float64, dialectName string) {
		e := Entry{RequestID: id, Time: time.Unix(0, nanos), Scope: scope, Method: method, Route: route, Dialect: dialectName, Status: status, ErrorCode: code,
			Model: model, Stream: stream, Chunks: chunks, StreamOutcome: outcome, TimeToFirstChunkMS: ttfc, DurationMS: dur,
			FinishReason: finish, PromptTokens: prompt, CompletionTokens: completion, ReasoningTokens: reasoning, Fixture: fixture,
			Fault: fault, Attempt: attempt, LimitHit: outcome + fault, QueueMS: ttfc * 3, SDK: SDK{Lang: lang, UserAgent: ua, RetryCount: toolChoice},
			Shape: Shape{Fields: fieldSets[fieldBits%uint64(len(fieldSets))], Messages: RoleCounts{User: users, Tool: tools}, ContentChars: RoleCounts{Assistant: users * 7},
				MessageNames: names, Tools: tools, ToolChoice: toolChoice, N: users, MaxTokens: maxTokens, MaxTokensParam: model,
				Stream: stream, IncludeUsage: names, ParallelToolCalls: !names, ResponseSchema: stream && names}}
		if other != 0 {
			e.DurationMS = other
		}
		if nanos%3 == 0 {
			e.SDK = SDK{}
		}
		if nanos%5 == 0 {
			e.Shape = Shape{}
		}
		e.bound() // as every entry is before it is encoded: no NaN or infinity

		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(reflected(e)); err != nil {
			t.Fatal(err)
		}
		if got := e.AppendJSON(nil); !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want.Bytes())
		}
		escaped, err := json.Marshal(reflected(e))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := json.Marshal(e); err != nil || !bytes.Equal(got, escaped) {
			t.Fatalf("json.Marshal(Entry): %v\n got %s\nwant %s", err, got, escaped)
		}
	})
}

// benchEntry is a chat call's entry as the server files it: an SDK's identity and a shape.
func benchEntry(b *testing.B) Entry {
	req := decode(b, oneMessageBody)
	return Entry{RequestID: "req_0123456789abcdef0123456789abcdef", Time: time.Now(), Method: "POST", Route: "/v1/chat/completions",
		Status: 200, Model: req.Model, DurationMS: 1.5, FinishReason: "stop", PromptTokens: 20, CompletionTokens: 9,
		Fixture: "generated", SDK: SDKOf(sdkHeadersOf()), Shape: ShapeOf(req)}
}

// BenchmarkEntryJSON compares AppendJSON, into a reused buffer as the shared store's writer
// calls it, with json.Marshal by reflection (what the writer called before).
func BenchmarkEntryJSON(b *testing.B) {
	e := benchEntry(b)
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = e.AppendJSON(buf[:0])
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(reflected(e)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
