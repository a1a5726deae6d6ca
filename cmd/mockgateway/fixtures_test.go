package main

// Fixtures end to end (docs/fixtures.md): the official Go SDK runs a two-turn agent loop scripted
// only by fixture files, streamed and not, in parallel scopes; the files reload on a ConfigMap
// style symlink swap; a bad file stops start-up; mockgateway fixtures lint.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const weatherFile = `fixtures:
  - name: weather-call
    match:
      model: mock-tools
      last_user: {contains: weather}
      tools: [get_weather]
    reply:
      tool_calls: [{name: get_weather, arguments: {city: Paris}}]
  - name: weather-answer
    priority: 10
    match: {tool_result: get_weather}
    reply: {content: "It is sunny in Paris."}
`

// configMapDir lays out files as a Kubernetes ConfigMap volume does: a timestamped directory, a
// ..data symlink to it, and top-level symlinks through ..data. swap replaces the contents the way
// the kubelet does: a new directory, a new ..data link renamed over the old one.
type configMapDir struct {
	t    *testing.T
	root string
	gen  int
}

func newConfigMapDir(t *testing.T, files map[string]string) *configMapDir {
	c := &configMapDir{t: t, root: t.TempDir()}
	c.swap(files)
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(c.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *configMapDir) swap(files map[string]string) {
	c.gen++
	dir := fmt.Sprintf("..2026_11_25_%02d", c.gen)
	if err := os.Mkdir(filepath.Join(c.root, dir), 0o755); err != nil {
		c.t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(c.root, dir, name), []byte(text), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	tmp := filepath.Join(c.root, "..data_tmp")
	if err := os.Symlink(dir, tmp); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.root, "..data")); err != nil {
		c.t.Fatal(err)
	}
}

func weatherParams(question string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "mock-tools",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:       "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
		})},
	}
}

// runWeatherLoop runs the agent loop as the SDK's users write it: call, run the tool, send the
// result back, read the answer. It returns the tool's arguments and the final answer.
func runWeatherLoop(ctx context.Context, client openai.Client, stream bool) (string, string, error) {
	params := weatherParams("What's the weather in Paris?")
	var msg openai.ChatCompletionMessage
	if stream {
		s := client.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			return "", "", err
		}
		if len(acc.Choices) == 0 {
			return "", "", fmt.Errorf("empty stream")
		}
		msg = acc.Choices[0].Message
	} else {
		first, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return "", "", err
		}
		msg = first.Choices[0].Message
	}
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" {
		return "", "", fmt.Errorf("turn 1: %s", msg.RawJSON())
	}
	call := msg.ToolCalls[0]
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage(`{"temp_c":21,"sky":"clear"}`, call.ID))
	second, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		return "", "", err
	}
	return call.Function.Arguments, second.Choices[0].Message.Content, nil
}

func TestFixturesWithTheGoSDK(t *testing.T) {
	dir := newConfigMapDir(t, map[string]string{"weather.yaml": weatherFile})
	in := startService(t, nil, "--fixtures", dir.root, "--fixtures-reload", "50ms", "--max-fixture-file-bytes", "4096")

	t.Run("parallel scopes", func(t *testing.T) {
		for i := range 8 {
			t.Run(fmt.Sprintf("scope %d", i), func(t *testing.T) {
				t.Parallel()
				scope := fmt.Sprintf("sdk-%d", i)
				client, _ := sdkClient(t, in, option.WithHeader("X-Mock-Scope", scope), option.WithHeader("X-Mock-Latency", "instant"))
				args, answer, err := runWeatherLoop(context.Background(), client, i%2 == 1)
				if err != nil {
					t.Fatal(err)
				}
				if args != `{"city":"Paris"}` || answer != "It is sunny in Paris." {
					t.Errorf("arguments %s, answer %q", args, answer)
				}
				// The scope's journal holds its two calls, and only those.
				var j struct {
					Data []struct{ Scope, Fixture string }
				}
				getJSON(t, in.URL+"/_mock/journal?scope="+scope, &j)
				if len(j.Data) != 2 || j.Data[0].Fixture != "weather-answer" || j.Data[1].Fixture != "weather-call" || j.Data[0].Scope != scope {
					t.Errorf("journal of %s: %+v", scope, j.Data)
				}
			})
		}
	})

	t.Run("reload on a ConfigMap swap", func(t *testing.T) {
		client, _ := sdkClient(t, in, option.WithHeader("X-Mock-Latency", "instant"))
		ask := func() string {
			c, err := client.Chat.Completions.New(context.Background(), userChat("mock-chat", "greet me"))
			if err != nil {
				t.Fatal(err)
			}
			return c.Choices[0].Message.Content
		}
		dir.swap(map[string]string{"weather.yaml": weatherFile + "  - name: greeting\n    match: {model: mock-chat}\n    reply: {content: Hello from the new file.}\n"})
		waitFor(t, func() bool { return ask() == "Hello from the new file." })

		// A bad swap keeps the last good set, and is counted.
		dir.swap(map[string]string{"weather.yaml": "fixtures:\n  - name: broken\n    match: {colour: red}\n"})
		waitFor(t, func() bool { return metricValue(t, in.URL, `mockgateway_fixture_reloads_total{result="error"}`) >= 1 })
		if got := ask(); got != "Hello from the new file." {
			t.Errorf("after a bad reload: %q", got)
		}

		// A valid file beyond --max-fixture-file-bytes is refused, counted, and the set stays.
		dir.swap(map[string]string{"weather.yaml": weatherFile + "  - name: big\n    match: {model: mock-chat}\n    reply: {content: Big.}\n#" + strings.Repeat("x", 8192) + "\n"})
		waitFor(t, func() bool { return metricValue(t, in.URL, `mockgateway_fixture_reloads_total{result="error"}`) >= 2 })
		if got := ask(); got != "Hello from the new file." {
			t.Errorf("after an oversize file: %q", got)
		}
	})
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(body, v) != nil {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
}

// metricValue reads one series of /metrics (0 when absent).
func metricValue(t *testing.T, base, series string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return 0
}

func TestFixturesBadFileStopsStartUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("fixtures:\n  - name: broken\n    match: {colour: red}\n    reply: {content: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--fixtures", path}, func(string) string { return "" }, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("run with a bad fixture file: %v", err)
	}
}

// TestFixturesOversizeFileStopsStartUp: at start-up a file beyond --max-fixture-file-bytes is a
// bad file like any other.
func TestFixturesOversizeFileStopsStartUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("fixtures: []\n#"+strings.Repeat("x", 2048)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--fixtures", path, "--max-fixture-file-bytes", "1024"}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "big.yaml") || !strings.Contains(err.Error(), "max-fixture-file-bytes") {
		t.Fatalf("run with an oversize fixture file: %v", err)
	}
}

func TestFixturesLint(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(weatherFile), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"fixtures", "lint", good}, nil, &out, io.Discard); err != nil || !strings.Contains(out.String(), "no problems") {
		t.Fatalf("lint of a good file: %v %s", err, out.String())
	}
	shadowed := filepath.Join(dir, "shadowed.yaml")
	if err := os.WriteFile(shadowed, []byte(weatherFile+"  - name: never\n    match: {model: mock-tools, last_user: {contains: weather}, tools: [get_weather]}\n    reply: {content: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(context.Background(), []string{"fixtures", "lint", shadowed}, nil, &out, io.Discard)
	if err == nil || !strings.Contains(out.String(), `"never"`) {
		t.Fatalf("lint of a shadowed fixture: %v %s", err, out.String())
	}
}
