package anthropic

import (
	"net/http"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect/chat"
)

// model is a model in Anthropic's shape (anthropic-sdk-go's ModelInfo).
type model struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

func modelOf(m *catalog.Model) model {
	return model{ID: m.ID, Type: "model", DisplayName: m.ID, CreatedAt: formatRFC3339(m.Created)}
}

// models are /v1/models and each /v1/models/{model} in Anthropic's shape, encoded once like the
// OpenAI ones: the list is one page, so has_more is false.
type models struct {
	list []byte
	one  map[string][]byte
}

func newModels(c *catalog.Catalog) *models {
	page := struct {
		Data    []model `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
	}{Data: []model{}}
	ms := &models{one: map[string][]byte{}}
	for _, m := range c.Executable() {
		page.Data = append(page.Data, modelOf(m))
		ms.one[m.ID] = chat.MustMarshal(modelOf(m))
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	ms.list = chat.MustMarshal(page)
	return ms
}

func (ms *models) List(*http.Request) []byte { return ms.list }

func (ms *models) Model(id string) ([]byte, bool) {
	b, ok := ms.one[id]
	return b, ok
}

// formatRFC3339 is a Unix time as Anthropic's created_at.
func formatRFC3339(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }
