package chat

import (
	"bytes"
	"encoding/json"
	"testing"

	"mockgateway/internal/apierr"
)

// TestAppendErrorMatchesEncodingJSON: the envelope is the bytes encoding/json writes of it, with
// HTML escaping off, whatever the message and param hold.
func TestAppendErrorMatchesEncodingJSON(t *testing.T) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	}
	for _, e := range []*apierr.Error{
		apierr.New(apierr.InvalidValue, "messages[0].content", "A <b>bold</b> & \"quoted\" message\n\u2028\xff."),
		apierr.New(apierr.InternalError, "", "The server had an unexpected error."),
		apierr.New(apierr.ServerBusy, "", "Slow down."),
	} {
		b := body{Message: e.Message, Type: e.Type, Code: string(e.Code)}
		if e.Param != "" {
			b.Param = &e.Param
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Error body `json:"error"`
		}{b}); err != nil {
			t.Fatal(err)
		}
		if got := AppendError(nil, e); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("AppendError:\n%s\nencoding/json:\n%s", got, want.Bytes())
		}
	}
}
