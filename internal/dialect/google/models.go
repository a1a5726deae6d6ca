package google

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect/chat"
)

// model is a model in Google's shape (google-genai's Model): its name is models/{id}.
type model struct {
	Name                       string   `json:"name"`
	Version                    string   `json:"version"`
	DisplayName                string   `json:"displayName"`
	Description                string   `json:"description,omitempty"`
	InputTokenLimit            int      `json:"inputTokenLimit"`
	OutputTokenLimit           int      `json:"outputTokenLimit"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	Thinking                   bool     `json:"thinking,omitempty"`
}

// methods are the generation methods every mock model serves.
var methods = []string{"generateContent", "countTokens"}

func modelOf(m *catalog.Model) model {
	window := m.ContextWindow
	if window == 0 {
		window = catalog.DefaultContextWindow
	}
	output := m.MaxOutputTokens
	if output <= 0 {
		output = window
	}
	return model{Name: "models/" + m.ID, Version: "001", DisplayName: m.ID, Description: m.Description,
		InputTokenLimit: window, OutputTokenLimit: output, SupportedGenerationMethods: methods, Thinking: m.Capabilities.Reasoning}
}

// models are the executable mock models in Google's shape, each encoded once; the list is paged
// as Google's is (pageSize, at most maxPageSize; pageToken, the nextPageToken of the page before).
type models struct {
	all []model
	one map[string][]byte
}

// Google's page sizes: 50 when none is asked, at most 1000.
const (
	defaultPageSize = 50
	maxPageSize     = 1000
)

func newModels(c *catalog.Catalog) *models {
	ms := &models{one: map[string][]byte{}}
	for _, m := range c.Executable() {
		ms.all = append(ms.all, modelOf(m))
		ms.one[m.ID] = chat.MustMarshal(modelOf(m))
	}
	return ms
}

// List is the page r asks for. A page token that is not one this list gave starts over.
func (ms *models) List(r *http.Request) []byte {
	q := r.URL.Query()
	size, err := strconv.Atoi(q.Get("pageSize"))
	if err != nil || size <= 0 {
		size = defaultPageSize
	}
	size = min(size, maxPageSize)
	from := 0
	if raw, err := base64.RawURLEncoding.DecodeString(q.Get("pageToken")); err == nil && len(raw) > 0 {
		if n, err := strconv.Atoi(string(raw)); err == nil && n >= 0 && n <= len(ms.all) {
			from = n
		}
	}
	to := min(from+size, len(ms.all))
	page := struct {
		Models        []model `json:"models"`
		NextPageToken string  `json:"nextPageToken,omitempty"`
	}{Models: ms.all[from:to]}
	if to < len(ms.all) {
		page.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(to)))
	}
	return chat.MustMarshal(page)
}

// Model is one model; its id may come as models/{id}.
func (ms *models) Model(id string) ([]byte, bool) {
	b, ok := ms.one[id]
	return b, ok
}
