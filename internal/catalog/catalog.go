// Package catalog owns the model catalog: which mock models execute, how each behaves, and the
// external provider models that exist only as metadata. The catalog is built in and can be
// replaced by a YAML file; a bad file stops start-up with a message naming the file, the entry
// and the problem.
package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	"mockgateway/internal/generate"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
)

// Kinds of catalog entries.
const (
	KindMock     = "mock"     // executes: the generator answers for it
	KindExternal = "external" // metadata only: never listed, never executed
)

// Model is one catalog entry.
type Model struct {
	ID            string            `yaml:"id"`
	Kind          string            `yaml:"kind"`
	Behavior      generate.Behavior `yaml:"behavior,omitempty"`
	Description   string            `yaml:"description,omitempty"`
	Created       int64             `yaml:"created,omitempty"`
	OwnedBy       string            `yaml:"owned_by,omitempty"`
	DefaultTokens int               `yaml:"default_tokens,omitempty"`
	Capabilities  Capabilities      `yaml:"capabilities"`
	// Latency is a profile name (instant, fast, realistic, slow) or explicit durations.
	Latency simulation.Latency `yaml:"latency,omitempty"`
	// Fault, in x-mock-fault syntax, fails this model's requests unless a request header
	// chooses another; FaultSpec is its parsed form.
	Fault     string            `yaml:"fault,omitempty"`
	FaultSpec *simulation.Fault `yaml:"-"`
	// Gateway is the retry and fallback policy of the gateway this model stands for: when a
	// fault hits, the mock reports what that gateway would do.
	Gateway *simulation.Policy `yaml:"gateway,omitempty"`
	// Provider is an external model's provider (external models only).
	Provider string `yaml:"provider,omitempty"`
	// ContextWindow is the model's context length in tokens. A mock enforces it (a prompt, plus
	// the requested budget, that does not fit is rejected; an answer stops where the window
	// ends) and defaults to DefaultContextWindow; for an external model it is metadata.
	ContextWindow int `yaml:"context_window,omitempty"`
	// MaxOutputTokens is the most a request may ask the model for in one answer (max_tokens,
	// max_completion_tokens, max_output_tokens): above it, 400 in the dialect's words, as a
	// provider's model refuses it. A mock defaults to DefaultMaxOutputTokens, or its window when
	// that is smaller; it is at most the window. For an external model it is metadata.
	MaxOutputTokens int `yaml:"max_output_tokens,omitempty"`
	// Limits are the provider's rate limits this model stands for (internal/quota): requests
	// and tokens per window and requests per day, per client key and scope. nil: no limits,
	// and nothing is counted.
	Limits *quota.Limits `yaml:"limits,omitempty"`
	// Capacity is how many requests the model serves at once; 0: no bound. Beyond it a
	// request waits, if Queue has room for it, else it is refused as overloaded, in the
	// dialect's words. LoadFactor F makes a latency grow with the requests running:
	// f = 1 + (F−1)·(running−1)/(Capacity−1); 0 or 1: latency does not grow.
	Capacity   int     `yaml:"capacity,omitempty"`
	Queue      int     `yaml:"queue,omitempty"`
	LoadFactor float64 `yaml:"load_factor,omitempty"`
}

// DefaultContextWindow is the context window of the built-in mocks, and of a catalog file's
// mocks that do not set one.
const DefaultContextWindow = 128000

// DefaultMaxOutputTokens is the output limit of the built-in mocks, and of a catalog file's
// mocks that do not set one: a current model's documented limit (docs/protocol.md, Output
// budgets), above what coding agents ask for on every call.
const DefaultMaxOutputTokens = 32768

// Capabilities are what a model accepts.
type Capabilities struct {
	Streaming bool `yaml:"streaming"`
	Tools     bool `yaml:"tools"`
	// Reasoning makes a mock a reasoning model (docs/protocol.md, Reasoning models): it spends
	// reasoning tokens, answers with a reasoning item, and refuses what OpenAI refuses of one.
	Reasoning bool `yaml:"reasoning,omitempty"`
}

// Executable reports whether the model is a mock that the service runs.
func (m *Model) Executable() bool { return m.Kind == KindMock }

// Catalog is an immutable, validated set of models.
type Catalog struct {
	models []Model
	byID   map[string]*Model
}

// defaultCreated is 2026-01-01T00:00:00Z: a fixed date, so /v1/models is byte-stable across
// restarts.
const defaultCreated = 1767225600

// Builtin is the catalog used without --catalog.
func Builtin() *Catalog {
	c, err := build([]Model{
		{ID: "mock-echo", Kind: KindMock, ContextWindow: DefaultContextWindow, Behavior: generate.BehaviorEcho,
			Description:  "Replies \"echo: \" followed by the last user message.",
			Capabilities: Capabilities{Streaming: true}},
		{ID: "mock-chat", Kind: KindMock, ContextWindow: DefaultContextWindow, Behavior: generate.BehaviorChat, DefaultTokens: 32,
			Description:  "Deterministic prose from a fixed word list, seeded by the request.",
			Capabilities: Capabilities{Streaming: true}},
		{ID: "mock-tools", Kind: KindMock, ContextWindow: DefaultContextWindow, Behavior: generate.BehaviorTools, DefaultTokens: 24,
			Description:  "Calls the request's tools with schema-valid arguments; answers in prose after a tool result.",
			Capabilities: Capabilities{Streaming: true, Tools: true}},
		{ID: "mock-slow", Kind: KindMock, ContextWindow: DefaultContextWindow, Behavior: generate.BehaviorChat, DefaultTokens: 32,
			Description:  "mock-chat with the slow latency profile: 2s to the first chunk, then 100ms ±30ms per token.",
			Capabilities: Capabilities{Streaming: true}, Latency: simulation.Profiles()["slow"]},
		{ID: "mock-flaky", Kind: KindMock, ContextWindow: DefaultContextWindow, Behavior: generate.BehaviorChat, DefaultTokens: 32,
			Description:  "mock-chat whose first attempt fails with 503 simulated_unavailable; a retry succeeds.",
			Capabilities: Capabilities{Streaming: true}, Fault: "unavailable;attempts=1;retry_after=100ms"},
		{ID: "mock-gateway", Kind: KindMock, ContextWindow: DefaultContextWindow, Behavior: generate.BehaviorChat, DefaultTokens: 32,
			Description:  "Always fails with simulated_server_error; its gateway policy retries twice, skips gpt-4o (metadata only) and falls back to mock-chat.",
			Capabilities: Capabilities{Streaming: true}, Fault: "server_error",
			Gateway: &simulation.Policy{Retries: 2, Backoff: 200 * time.Millisecond, BackoffMultiplier: 2, Fallback: []string{"gpt-4o", "mock-chat"}}},
		{ID: "mock-reasoning", Kind: KindMock, ContextWindow: DefaultContextWindow, Behavior: generate.BehaviorTools, DefaultTokens: 24,
			Description:  "mock-tools as a reasoning model: reasoning tokens by effort, a reasoning item with its summary and sealed encrypted content, and OpenAI's refusals of max_tokens, temperature and top_p; on Anthropic's Messages API, with thinking on, a signed thinking block and Anthropic's thinking rules.",
			Capabilities: Capabilities{Streaming: true, Tools: true, Reasoning: true}},
		{ID: "gpt-4o", Kind: KindExternal, Provider: "openai", ContextWindow: 128000, Capabilities: Capabilities{Streaming: true, Tools: true}},
		{ID: "gpt-4.1-mini", Kind: KindExternal, Provider: "openai", ContextWindow: 1047576, Capabilities: Capabilities{Streaming: true, Tools: true}},
		{ID: "claude-sonnet-4", Kind: KindExternal, Provider: "anthropic", ContextWindow: 200000, Capabilities: Capabilities{Streaming: true, Tools: true}},
		{ID: "gemini-2.5-pro", Kind: KindExternal, Provider: "google", ContextWindow: 1048576, Capabilities: Capabilities{Streaming: true, Tools: true}},
	})
	if err != nil {
		panic("built-in catalog is invalid: " + err.Error()) // a programming error, caught by tests
	}
	return c
}

type file struct {
	Models []Model `yaml:"models"`
}

// Load reads a catalog file. Every error names the file, and where it can the entry.
func Load(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", path, errors.Unwrap(err))
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates a catalog document. Unknown keys are errors, so a typo in a
// catalog fails loudly instead of silently meaning nothing.
func Parse(data []byte) (*Catalog, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty; it needs a models: list")
		}
		return nil, fmt.Errorf("not a valid catalog: %v", err)
	}
	if len(f.Models) == 0 {
		return nil, errors.New("models: the list is empty; at least one mock model is needed")
	}
	return build(f.Models)
}

var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)

func build(models []Model) (*Catalog, error) {
	c := &Catalog{models: make([]Model, len(models)), byID: make(map[string]*Model, len(models))}
	copy(c.models, models)
	mocks := 0
	for i := range c.models {
		m := &c.models[i]
		entry := fmt.Sprintf("models[%d]", i)
		if m.ID != "" {
			entry += fmt.Sprintf(" (%s)", m.ID)
		}
		if err := validate(m); err != nil {
			return nil, fmt.Errorf("%s: %v", entry, err)
		}
		if _, dup := c.byID[m.ID]; dup {
			return nil, fmt.Errorf("%s: id is used by an earlier entry", entry)
		}
		if m.Created == 0 {
			m.Created = defaultCreated
		}
		if m.OwnedBy == "" {
			m.OwnedBy = "mockgateway"
			if m.Kind == KindExternal {
				m.OwnedBy = m.Provider
			}
		}
		if m.Executable() {
			mocks++
		}
		c.byID[m.ID] = m
	}
	if mocks == 0 {
		return nil, errors.New("models: no entry has kind: mock, so nothing could execute")
	}
	for i := range c.models {
		m := &c.models[i]
		if m.Gateway == nil {
			continue
		}
		for j, id := range m.Gateway.Fallback {
			if _, ok := c.byID[id]; !ok || id == m.ID {
				return nil, fmt.Errorf("models[%d] (%s): gateway.fallback[%d] must name another model of the catalog", i, m.ID, j)
			}
		}
	}
	return c, nil
}

func validate(m *Model) error {
	if m.ID == "" {
		return errors.New("id is missing")
	}
	if !validID.MatchString(m.ID) {
		return errors.New("id must be 1-64 characters of letters, digits and . _ : -, starting with a letter or digit")
	}
	switch m.Kind {
	case KindMock:
		switch m.Behavior {
		case generate.BehaviorEcho:
		case generate.BehaviorChat, generate.BehaviorTools:
			if m.DefaultTokens == 0 {
				m.DefaultTokens = 32
			}
		case "":
			return errors.New("behavior is missing; a mock needs one of echo, chat, tools")
		default:
			return errors.New("behavior must be one of echo, chat, tools")
		}
		if m.DefaultTokens < 0 {
			return errors.New("default_tokens must be positive")
		}
		if m.Behavior == generate.BehaviorTools && !m.Capabilities.Tools {
			return errors.New("behavior tools needs capabilities.tools: true")
		}
		if m.Latency.FirstChunk < 0 || m.Latency.BetweenChunks < 0 || m.Latency.Jitter < 0 {
			return errors.New("latency durations must not be negative")
		}
		if m.Fault != "" {
			f, err := simulation.ParseFault(m.Fault)
			if err != nil {
				return fmt.Errorf("fault: %v", err)
			}
			m.FaultSpec = &f
		}
		if m.Gateway != nil {
			if err := m.Gateway.Validate(); err != nil {
				return err
			}
		}
		switch {
		case m.Capacity < 0 || m.Capacity > 1_000_000:
			return errors.New("capacity must be from 0 (no bound) to 1000000")
		case m.Queue < 0 || m.Queue > 1_000_000:
			return errors.New("queue must be from 0 to 1000000")
		case m.Queue > 0 && m.Capacity == 0:
			return errors.New("queue needs a capacity: without one nothing waits")
		case m.LoadFactor != 0 && (m.LoadFactor < 1 || m.LoadFactor > 100):
			return errors.New("load_factor must be from 1 to 100")
		case m.LoadFactor > 1 && m.Capacity < 2:
			return errors.New("load_factor needs a capacity of at least 2: latency grows from one request running to capacity")
		}
		if m.Limits != nil {
			if err := m.Limits.Validate(); err != nil {
				return fmt.Errorf("limits: %v", err)
			}
		}
		if m.Provider != "" {
			return errors.New("provider describes external models; a mock has none")
		}
		switch {
		case m.ContextWindow < 0:
			return errors.New("context_window must not be negative")
		case m.ContextWindow == 0:
			m.ContextWindow = DefaultContextWindow
		}
		switch {
		case m.MaxOutputTokens < 0:
			return errors.New("max_output_tokens must not be negative")
		case m.MaxOutputTokens == 0:
			m.MaxOutputTokens = min(DefaultMaxOutputTokens, m.ContextWindow)
		case m.MaxOutputTokens > m.ContextWindow:
			// No answer could be that long: the window holds the prompt and the answer.
			return errors.New("max_output_tokens must not exceed context_window")
		}
	case KindExternal:
		if m.Provider == "" {
			return errors.New("provider is missing; an external model needs one")
		}
		if m.Behavior != "" || m.DefaultTokens != 0 || !m.Latency.IsZero() || m.Fault != "" || m.Gateway != nil || m.Limits != nil || m.Capacity != 0 || m.Queue != 0 || m.LoadFactor != 0 {
			return errors.New("behavior, default_tokens, latency, fault, gateway, limits, capacity, queue and load_factor apply to mocks; an external model is metadata only")
		}
		if m.ContextWindow < 0 {
			return errors.New("context_window must not be negative")
		}
		if m.MaxOutputTokens < 0 {
			return errors.New("max_output_tokens must not be negative")
		}
	case "":
		return errors.New("kind is missing; it must be mock or external")
	default:
		return errors.New("kind must be mock or external")
	}
	return nil
}

// Lookup finds a model by id, executable or not.
func (c *Catalog) Lookup(id string) (*Model, bool) {
	m, ok := c.byID[id]
	return m, ok
}

// Executable lists the mock models in catalog order.
func (c *Catalog) Executable() []*Model {
	var out []*Model
	for i := range c.models {
		if c.models[i].Executable() {
			out = append(out, &c.models[i])
		}
	}
	return out
}

// ExecutableIDs lists the mock models' ids in catalog order.
func (c *Catalog) ExecutableIDs() []string {
	var out []string
	for _, m := range c.Executable() {
		out = append(out, m.ID)
	}
	return out
}

// Counts returns how many models execute and how many are metadata only.
func (c *Catalog) Counts() (executable, metadataOnly int) {
	for i := range c.models {
		if c.models[i].Executable() {
			executable++
		} else {
			metadataOnly++
		}
	}
	return executable, metadataOnly
}

// IDs lists every id, sorted: the closed set of model label values.
func (c *Catalog) IDs() []string {
	out := make([]string, 0, len(c.models))
	for i := range c.models {
		out = append(out, c.models[i].ID)
	}
	sort.Strings(out)
	return out
}

// Target resolves a fallback id for simulation.Decide.
func (c *Catalog) Target(id string) (simulation.Target, bool) {
	m, ok := c.byID[id]
	if !ok {
		return simulation.Target{}, false
	}
	return simulation.Target{Executable: m.Executable()}, true
}
