package main

// The scaling table's work: the catalog, the prompts, tools and fixtures of each point, and
// what a point's answer must show.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"mockgateway/internal/chatclient"
)

const (
	scaleChatModel = "scale-chat-16" // chat prose of 16 tokens, a very large context window
	scaleToolModel = "mock-tools"
	scaleBodyLimit = 8 << 20 // --max-body-bytes for the main scaling server: 1 MiB of prompt and its JSON
	scaleBaseText  = "Tell me something about the weather by the sea this afternoon"
)

// scaleCatalog replaces the built-in catalog for the scaling servers: chat models whose default
// length is the output of a point (scale-chat-16 … scale-chat-4096), so that no max_tokens is
// sent and a row measures output made, not output cut — and whose context window takes a 1 MiB
// prompt (the built-in 128,000 tokens do not); mock-tools as built in.
func scaleCatalog() string {
	var b strings.Builder
	b.WriteString("models:\n")
	for _, t := range scaleTokens {
		fmt.Fprintf(&b, "  - id: %s\n    kind: mock\n    behavior: chat\n    default_tokens: %d\n    context_window: 100000000\n    capabilities: {streaming: true, tools: false}\n", scaleChat(t), t)
	}
	b.WriteString("  - id: mock-tools\n    kind: mock\n    behavior: tools\n    default_tokens: 24\n    capabilities: {streaming: true, tools: true}\n")
	return b.String()
}

// scaleChat is the catalog id of the chat model that answers t tokens.
func scaleChat(t int) string { return "scale-chat-" + strconv.Itoa(t) }

// Points of each dimension.
var (
	scalePromptKB   = []int{1, 16, 256, 1024}
	scaleTokens     = []int{16, 256, 1024, 4096}
	scaleChoices    = []int{1, 8, 32, 128}
	scaleTools      = []int{1, 8, 32, 128}
	scaleFixtures   = []int{0, 100, 1000, 10000}
	scaleFixPerFile = 100
)

// promptText is exactly n bytes of ASCII words (nothing to escape in JSON).
func promptText(n int) string {
	words := []string{"harbor", "lantern", "quiet", "meadow", "copper", "river", "signal", "orchard", "window", "amber", "planet", "thistle"}
	var b strings.Builder
	b.Grow(n + 16)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(i*7+i/len(words))%len(words)])
	}
	return b.String()[:n]
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type scaleMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// nestedTool is a function tool whose parameters nest an array of objects inside an object.
func nestedTool(i int) map[string]any {
	str := map[string]any{"type": "string"}
	tag := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"name", "weight"},
		"properties": map[string]any{"name": str, "weight": map[string]any{"type": "number", "minimum": 0, "maximum": 1}}}
	filter := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"tags", "limit"},
		"properties": map[string]any{
			"tags":  map[string]any{"type": "array", "items": tag, "maxItems": 3},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 50},
			"sort":  map[string]any{"type": "string", "enum": []string{"asc", "desc"}},
		}}
	return map[string]any{"type": "function", "function": map[string]any{
		"name":        toolName(i),
		"description": "Search catalogue " + strconv.Itoa(i) + " with nested filters",
		"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"query", "filter"},
			"properties": map[string]any{"query": str, "filter": filter}},
	}}
}

func toolName(i int) string { return fmt.Sprintf("search_%03d", i) }

func fixtureNeedle(i int) string { return fmt.Sprintf("needle-%05d", i) }
func fixtureReply(i int) string  { return fmt.Sprintf("fixture answer %05d", i) }

// fixtureFiles are the JSON files of n fixtures, scaleFixPerFile a file, in load order: each
// matches scale-chat requests whose last user message contains its own needle.
func fixtureFiles(n int) map[string][]byte {
	files := map[string][]byte{}
	for start := 0; start < n; start += scaleFixPerFile {
		var fs []map[string]any
		for i := start; i < min(n, start+scaleFixPerFile); i++ {
			fs = append(fs, map[string]any{
				"name":  fmt.Sprintf("scale-%05d", i),
				"match": map[string]any{"model": scaleChatModel, "last_user": map[string]any{"contains": fixtureNeedle(i)}},
				"reply": map[string]any{"content": fixtureReply(i)},
			})
		}
		files[fmt.Sprintf("f%05d.json", start/scaleFixPerFile)] = mustJSON(map[string]any{"fixtures": fs})
	}
	return files
}

// answer is the part of a JSON chat answer the checks read.
type answer struct {
	Choices []struct {
		Message struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func decodeAnswer(body []byte) (answer, error) {
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return a, fmt.Errorf("answer is not JSON: %v", err)
	}
	if len(a.Choices) == 0 {
		return a, errors.New("answer has no choices")
	}
	return a, nil
}

// scalingPlan lays out the dimensions asked for, their points and the checks of their answers.
func scalingPlan(dims []string) []*scaleDimResult {
	var out []*scaleDimResult
	for _, key := range dims {
		switch key {
		case "prompt":
			out = append(out, &scaleDimResult{Key: key, Name: "prompt size", Unit: "KB",
				Request: "scale-chat-16 (chat prose, 16 tokens), JSON, one user message of N KiB of ASCII words (the output stays 16 tokens)"})
		case "tokens":
			out = append(out,
				&scaleDimResult{Key: key, Name: "output tokens, JSON", Unit: "token",
					Request: "scale-chat-N (chat prose whose default length is N tokens; no max_tokens), 12-word prompt"},
				&scaleDimResult{Key: key, Name: "output tokens, stream", Unit: "token",
					Request: "the same with stream: true, x-mock-latency: instant; the whole stream read"})
		case "n":
			out = append(out, &scaleDimResult{Key: key, Name: "choices (n)", Unit: "choice",
				Request: "scale-chat-16, JSON, n choices of 16 tokens each"})
		case "tools":
			out = append(out, &scaleDimResult{Key: key, Name: "tools offered", Unit: "tool",
				Request: "mock-tools, JSON, N tools each with a nested object → array of objects parameter schema, parallel_tool_calls false (one call to the first tool, so the output stays the same)"})
		case "fixtures":
			out = append(out,
				&scaleDimResult{Key: key, Name: "file fixtures, none matches", Unit: "fixture",
					Request: "scale-chat-16, JSON; N file fixtures (100 a file), each model scale-chat-16 and last_user contains its own needle; the message holds none"},
				&scaleDimResult{Key: key, Name: "file fixtures, the last matches", Unit: "fixture",
					Request: "the same message plus the needle of the last fixture loaded (the last one consulted)"})
		}
	}
	return out
}

// scalingPoints builds every point of the plan's dimensions.
func scalingPoints(plan []*scaleDimResult) []*scalePoint {
	var pts []*scalePoint
	add := func(d *scaleDimResult, label string, units float64, server string, body any, header map[string]string, check func(*http.Response, []byte) error) {
		pts = append(pts, &scalePoint{label: label, units: units, server: server, body: mustJSON(body), header: header, check: check, dim: d})
	}
	for _, d := range plan {
		switch d.Name {
		case "prompt size":
			for _, kb := range scalePromptKB {
				text := promptText(kb << 10)
				add(d, fmt.Sprintf("%d KB", kb), float64(kb), "main",
					map[string]any{"model": scaleChatModel, "messages": []scaleMsg{{"user", text}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err == nil && a.Usage.CompletionTokens != 16 {
							err = fmt.Errorf("%d completion tokens, want 16", a.Usage.CompletionTokens)
						}
						return err
					})
			}
		case "output tokens, JSON", "output tokens, stream":
			stream := strings.HasSuffix(d.Name, "stream")
			for _, t := range scaleTokens {
				body := map[string]any{"model": scaleChat(t), "messages": []scaleMsg{{"user", scaleBaseText}}}
				var header map[string]string
				check := func(_ *http.Response, b []byte) error {
					a, err := decodeAnswer(b)
					if err == nil && a.Usage.CompletionTokens != t {
						err = fmt.Errorf("%d completion tokens, want %d", a.Usage.CompletionTokens, t)
					}
					return err
				}
				if stream {
					body["stream"] = true
					header = map[string]string{"x-mock-latency": "instant"}
					check = func(_ *http.Response, b []byte) error {
						st, err := chatclient.Read(strings.NewReader(string(b)), 0)
						switch {
						case err != nil:
							return err
						case !st.Done || st.ContentDeltas != t:
							return fmt.Errorf("stream: %d content deltas, [DONE]=%v; want %d and [DONE]", st.ContentDeltas, st.Done, t)
						}
						return nil
					}
				}
				add(d, fmt.Sprintf("%d tokens", t), float64(t), "main", body, header, check)
			}
		case "choices (n)":
			for _, n := range scaleChoices {
				add(d, fmt.Sprintf("n=%d", n), float64(n), "main",
					map[string]any{"model": scaleChatModel, "n": n, "messages": []scaleMsg{{"user", scaleBaseText}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err == nil && (len(a.Choices) != n || a.Usage.CompletionTokens != 16*n) {
							err = fmt.Errorf("%d choices and %d completion tokens, want %d and %d", len(a.Choices), a.Usage.CompletionTokens, n, 16*n)
						}
						return err
					})
			}
		case "tools offered":
			for _, n := range scaleTools {
				tools := make([]map[string]any, n)
				for i := range tools {
					tools[i] = nestedTool(i)
				}
				add(d, fmt.Sprintf("%d tools", n), float64(n), "main",
					map[string]any{"model": scaleToolModel, "parallel_tool_calls": false, "tools": tools,
						"messages": []scaleMsg{{"user", "Find three lanterns, sorted by weight"}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err != nil {
							return err
						}
						if tc := a.Choices[0].Message.ToolCalls; len(tc) != 1 || tc[0].Function.Name != toolName(0) {
							return fmt.Errorf("want one call to %s, got %d call(s)", toolName(0), len(tc))
						}
						return nil
					})
			}
		case "file fixtures, none matches", "file fixtures, the last matches":
			last := d.Name == "file fixtures, the last matches"
			for _, n := range scaleFixtures {
				if last && n == 0 {
					continue
				}
				text := scaleBaseText
				if last {
					text += " " + fixtureNeedle(n-1)
				}
				add(d, fmt.Sprintf("%d fixtures", n), float64(n), fmt.Sprintf("fixtures-%d", n),
					map[string]any{"model": scaleChatModel, "messages": []scaleMsg{{"user", text}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err != nil {
							return err
						}
						got := a.Choices[0].Message.Content
						switch {
						case last && got != fixtureReply(n-1):
							return fmt.Errorf("the last fixture did not answer (content %.40q)", got)
						case !last && strings.HasPrefix(got, "fixture answer"):
							return fmt.Errorf("a fixture answered a request none should match (%.40q)", got)
						}
						return nil
					})
			}
		}
	}
	return pts
}
