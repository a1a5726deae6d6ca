package protocol

import "testing"

// responsesBenchBodies are the Responses requests the benchmarks decode: the chat ones of
// benchResponsesBodies (a string input; a tool round trip), the load bench's (cmd/loadtest: its
// chat message as an input item), and what the Agents SDK sends on the second turn of a tool loop,
// as it sent it (indented, every member it sets).
func responsesBenchBodies(b testing.TB) map[string]string {
	var agents string
	for _, c := range recordedClientBodies(b) {
		if c.name == "openai-agents-js/tool_round_trip.json" {
			agents = c.body
		}
	}
	if agents == "" {
		b.Fatal("no openai-agents-js/tool_round_trip.json")
	}
	return map[string]string{
		"string": benchResponsesBodies["chat"],
		"item":   `{"model":"mock-echo","input":[{"role":"user","content":"the quick brown fox jumps over the lazy dog"}]}`,
		"tools":  benchResponsesBodies["tools"],
		"agents": agents,
	}
}

var responsesBenchNames = []string{"string", "item", "tools", "agents"}

// BenchmarkResponsesDecode decodes responsesBenchBodies, their echo included: what the Responses
// dialect costs a request before the chat path takes it (BenchmarkDecodeChatRequest is chat's).
func BenchmarkResponsesDecode(b *testing.B) {
	bodies := responsesBenchBodies(b)
	for _, name := range responsesBenchNames {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			raw := []byte(bodies[name])
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, _, e := DecodeResponsesRequest(raw, Limits{}); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}

// BenchmarkResponseAppendJSON encodes the JSON answer of each of responsesBenchBodies: a
// message of about the bench's length and the request's echo.
func BenchmarkResponseAppendJSON(b *testing.B) {
	bodies := responsesBenchBodies(b)
	for _, name := range responsesBenchNames {
		b.Run(name, func(b *testing.B) {
			_, echo, e := DecodeResponsesRequest([]byte(bodies[name]), Limits{})
			if e != nil {
				b.Fatal(e)
			}
			r := Response{ID: "resp_c4f384aac31aca06537525f22774807a", CreatedAt: 1800000000, Status: "completed", CompletedAt: 1800000001,
				Model: "mock-echo", Usage: &ResponseUsage{Input: 15, Output: 16}, Echo: echo,
				Output: []OutputItem{{ID: "msg_c4f384aac31aca06537525f22774807a0", Status: "completed",
					Text: "echo: the quick brown fox jumps over the lazy dog, and then over the lazy cat, and home again."}}}
			buf := make([]byte, 0, r.SizeHint())
			b.ReportAllocs()
			for b.Loop() {
				buf = r.AppendJSON(buf[:0])
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}
