package chat

import (
	"bytes"
	"encoding/json"

	"mockgateway/internal/apierr"
)

// errorEnvelope is OpenAI's error body: always all four keys, param null when empty.
type errorEnvelope struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// AppendError appends e in OpenAI's envelope, and a newline. Errors are rare beside answers:
// encoding/json is fine for them, with HTML escaping off like every other body.
func AppendError(buf []byte, e *apierr.Error) []byte {
	b := errorBody{Message: e.Message, Type: e.Type, Code: string(e.Code)}
	if e.Param != "" {
		p := e.Param
		b.Param = &p
	}
	out := bytes.NewBuffer(buf)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(errorEnvelope{Error: b}) // strings only: it cannot fail
	return out.Bytes()
}
