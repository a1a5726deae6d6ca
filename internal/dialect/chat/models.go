package chat

import (
	"encoding/json"
	"net/http"

	"mockgateway/internal/catalog"
)

type modelObject struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	Created      int64             `json:"created"`
	OwnedBy      string            `json:"owned_by"`
	Capabilities modelCapabilities `json:"capabilities"`
}

type modelCapabilities struct {
	Streaming bool `json:"streaming"`
	Tools     bool `json:"tools"`
	Reasoning bool `json:"reasoning"`
}

func modelObjectOf(m *catalog.Model) modelObject {
	return modelObject{ID: m.ID, Object: "model", Created: m.Created, OwnedBy: m.OwnedBy,
		Capabilities: modelCapabilities{Streaming: m.Capabilities.Streaming, Tools: m.Capabilities.Tools, Reasoning: m.Capabilities.Reasoning}}
}

// Models is OpenAI's model list: only the executable mock models, encoded once, which also
// makes it byte-stable across restarts.
type Models struct {
	list []byte
	one  map[string][]byte
}

// NewModels encodes the catalog's list and models in OpenAI's shape.
func NewModels(c *catalog.Catalog) *Models {
	list := struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}{Object: "list", Data: []modelObject{}}
	m := &Models{one: map[string][]byte{}}
	for _, model := range c.Executable() {
		list.Data = append(list.Data, modelObjectOf(model))
		m.one[model.ID] = MustMarshal(modelObjectOf(model))
	}
	m.list = MustMarshal(list)
	return m
}

// List is the whole list: one page.
func (m *Models) List(*http.Request) []byte { return m.list }

// Model is one model's object.
func (m *Models) Model(id string) ([]byte, bool) {
	b, ok := m.one[id]
	return b, ok
}

// MustMarshal encodes a body once, at start-up, with the newline every answer ends with.
func MustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("encoding a fixed response: " + err.Error())
	}
	return append(b, '\n')
}
