package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltin(t *testing.T) {
	c := Builtin()
	var ids []string
	for _, m := range c.Executable() {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "mock-echo,mock-chat,mock-tools,mock-slow,mock-flaky,mock-gateway,mock-reasoning" {
		t.Errorf("executable = %v", ids)
	}
	if exec, meta := c.Counts(); exec != 7 || meta != 4 {
		t.Errorf("counts = %d, %d", exec, meta)
	}
	m, ok := c.Lookup("gpt-4o")
	if !ok || m.Executable() || m.Provider != "openai" || m.OwnedBy != "openai" {
		t.Errorf("gpt-4o = %+v", m)
	}
	if m, _ := c.Lookup("mock-reasoning"); !m.Capabilities.Reasoning || !m.Capabilities.Tools || m.Behavior != "tools" {
		t.Errorf("mock-reasoning = %+v", m)
	}
	if m, _ := c.Lookup("mock-chat"); m.Capabilities.Reasoning {
		t.Errorf("mock-chat reasons: %+v", m)
	}
	if m, _ := c.Lookup("mock-chat"); m.Created != defaultCreated || m.OwnedBy != "mockgateway" || m.DefaultTokens != 32 {
		t.Errorf("mock-chat = %+v", m)
	}
	for _, m := range c.Executable() {
		if m.ContextWindow != 128000 || m.MaxOutputTokens != 32768 {
			t.Errorf("%s: context_window = %d, max_output_tokens = %d, want 128000 and 32768", m.ID, m.ContextWindow, m.MaxOutputTokens)
		}
	}
}

// TestMockOutputLimit: a mock's output limit is its own, or the default, or its window when that
// is smaller; it never exceeds the window.
func TestMockOutputLimit(t *testing.T) {
	c, err := Parse([]byte(`models:
  - {id: own, kind: mock, behavior: chat, max_output_tokens: 100000}
  - {id: plain, kind: mock, behavior: echo}
  - {id: small, kind: mock, behavior: echo, context_window: 8192}
  - {id: meta, kind: external, provider: openai, max_output_tokens: 16384}
`))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"own": 100000, "plain": DefaultMaxOutputTokens, "small": 8192, "meta": 16384} {
		if m, _ := c.Lookup(id); m.MaxOutputTokens != want {
			t.Errorf("%s: max_output_tokens = %d, want %d", id, m.MaxOutputTokens, want)
		}
	}
}

func TestMockContextWindow(t *testing.T) {
	c, err := Parse([]byte(`models:
  - {id: small, kind: mock, behavior: chat, context_window: 8192}
  - {id: plain, kind: mock, behavior: echo}
`))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Lookup("small"); m.ContextWindow != 8192 {
		t.Errorf("small: context_window = %d, want 8192", m.ContextWindow)
	}
	if m, _ := c.Lookup("plain"); m.ContextWindow != DefaultContextWindow {
		t.Errorf("plain: context_window = %d, want the default %d", m.ContextWindow, DefaultContextWindow)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(`models:
  - id: mock-slow
    kind: mock
    behavior: chat
    default_tokens: 10
    capabilities: {streaming: true, tools: false, reasoning: true}
    latency: {first_chunk: 200ms, between_chunks: 50ms}
  - id: my-provider-model
    kind: external
    provider: acme
    context_window: 8192
    capabilities: {streaming: true, tools: true}
`), 0o644)
	c, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Lookup("mock-slow")
	if !m.Capabilities.Reasoning {
		t.Errorf("reasoning: true was not read: %+v", m.Capabilities)
	}
	if m.Latency.FirstChunk.Milliseconds() != 200 || m.Latency.BetweenChunks.Milliseconds() != 50 {
		t.Errorf("latency = %+v", m.Latency)
	}

	bad := []struct{ name, doc, want string }{
		{"empty", ``, "empty"},
		{"not yaml", "models: [", "not a valid catalog"},
		{"unknown key", "models:\n  - {id: a, kind: mock, behavior: echo, colour: red}\n", "colour"},
		{"no models", "models: []\n", "at least one mock"},
		{"missing id", "models:\n  - {kind: mock, behavior: echo}\n", "models[0]: id is missing"},
		{"bad id", "models:\n  - {id: 'a b', kind: mock, behavior: echo}\n", "models[0] (a b): id must be"},
		{"duplicate", "models:\n  - {id: a, kind: mock, behavior: echo}\n  - {id: a, kind: mock, behavior: chat}\n", "models[1] (a): id is used"},
		{"bad kind", "models:\n  - {id: a, kind: real, behavior: echo}\n", "models[0] (a): kind must be mock or external"},
		{"no behavior", "models:\n  - {id: a, kind: mock}\n", "behavior is missing"},
		{"bad behavior", "models:\n  - {id: a, kind: mock, behavior: sing}\n", "behavior must be one of"},
		{"tools without capability", "models:\n  - {id: a, kind: mock, behavior: tools}\n", "capabilities.tools"},
		{"external without provider", "models:\n  - {id: a, kind: mock, behavior: echo}\n  - {id: b, kind: external}\n", "models[1] (b): provider is missing"},
		{"external with behavior", "models:\n  - {id: a, kind: mock, behavior: echo}\n  - {id: b, kind: external, provider: x, behavior: echo}\n", "metadata only"},
		{"only external", "models:\n  - {id: b, kind: external, provider: x}\n", "nothing could execute"},
		{"mock with provider", "models:\n  - {id: a, kind: mock, behavior: echo, provider: x}\n", "provider describes external models"},
		{"negative context window", "models:\n  - {id: a, kind: mock, behavior: echo, context_window: -1}\n", "context_window must not be negative"},
		{"negative output limit", "models:\n  - {id: a, kind: mock, behavior: echo, max_output_tokens: -1}\n", "max_output_tokens must not be negative"},
		{"output limit past the window", "models:\n  - {id: a, kind: mock, behavior: echo, context_window: 1000, max_output_tokens: 1001}\n", "max_output_tokens must not exceed context_window"},
		{"negative latency", "models:\n  - {id: a, kind: mock, behavior: echo, latency: {first_chunk: -1s}}\n", "negative"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(b.name, " ", "_")+".yaml")
			os.WriteFile(p, []byte(b.doc), 0o644)
			_, err := Load(p)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), b.want) {
				t.Errorf("error %q should name the file and say %q", err, b.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// TestLimits: a mock's limits are read in the header's names and checked; a bad one names the
// entry; an external model has none.
func TestLimits(t *testing.T) {
	c, err := Parse([]byte(`models:
  - {id: limited, kind: mock, behavior: chat, limits: {rpm: 3, tpm: 2000, rpd: 50, itpm: 1500, otpm: 500, window: 5s}}
  - {id: plain, kind: mock, behavior: echo}
`))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Lookup("limited"); m.Limits == nil || m.Limits.Requests != 3 || m.Limits.Tokens != 2000 || m.Limits.Daily != 50 || m.Limits.InputTokens != 1500 || m.Limits.OutputTokens != 500 || m.Limits.Period().String() != "5s" {
		t.Errorf("limited: %+v", m.Limits)
	}
	if m, _ := c.Lookup("plain"); m.Limits != nil {
		t.Errorf("plain has limits: %+v", m.Limits)
	}
	for doc, want := range map[string]string{
		`models: [{id: m, kind: mock, behavior: echo, limits: {rpm: -1}}]`:                                           "models[0] (m): limits: rpm, tpm, rpd, itpm and otpm must not be negative",
		`models: [{id: m, kind: mock, behavior: echo, limits: {window: 5s}}]`:                                        "models[0] (m): limits: at least one of rpm, tpm, rpd, itpm and otpm is needed",
		`models: [{id: m, kind: mock, behavior: echo, limits: {otpm: -5}}]`:                                          "models[0] (m): limits: rpm, tpm, rpd, itpm and otpm must not be negative",
		`models: [{id: m, kind: mock, behavior: echo, limits: {rpm: 1, window: 48h}}]`:                               "models[0] (m): limits: window must be from 0 (a minute) to 24h",
		`models: [{id: m, kind: mock, behavior: echo}, {id: x, kind: external, provider: openai, limits: {rpm: 1}}]`: "models[1] (x): behavior, default_tokens, latency, fault, gateway, limits, capacity, queue and load_factor apply to mocks; an external model is metadata only",
	} {
		if _, err := Parse([]byte(doc)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", doc, err, want)
		}
	}
}

// TestLoadSettings: capacity, queue and load_factor are read and checked.
func TestLoadSettings(t *testing.T) {
	c, err := Parse([]byte("models:\n  - {id: busy, kind: mock, behavior: chat, capacity: 2, queue: 3, load_factor: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Lookup("busy"); m.Capacity != 2 || m.Queue != 3 || m.LoadFactor != 4 {
		t.Errorf("busy: %+v", m)
	}
	for doc, want := range map[string]string{
		`models: [{id: m, kind: mock, behavior: echo, queue: 2}]`:                      "models[0] (m): queue needs a capacity: without one nothing waits",
		`models: [{id: m, kind: mock, behavior: echo, capacity: -1}]`:                  "models[0] (m): capacity must be from 0 (no bound) to 1000000",
		`models: [{id: m, kind: mock, behavior: echo, capacity: 4, load_factor: 0.5}]`: "models[0] (m): load_factor must be from 1 to 100",
		`models: [{id: m, kind: mock, behavior: echo, capacity: 1, load_factor: 2}]`:   "models[0] (m): load_factor needs a capacity of at least 2: latency grows from one request running to capacity",
	} {
		if _, err := Parse([]byte(doc)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", doc, err, want)
		}
	}
}
