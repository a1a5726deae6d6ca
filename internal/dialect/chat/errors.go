package chat

import (
	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonenc"
	"mockgateway/internal/protocol"
)

// AppendError appends e in OpenAI's error envelope, and a newline: always all four keys, param
// null when empty. The bytes are encoding/json's, HTML escaping off like every other body
// (TestAppendErrorMatchesEncodingJSON).
func AppendError(buf []byte, e *apierr.Error) []byte {
	buf = append(buf, `{"error":{"message":`...)
	buf = jsonenc.AppendString(buf, e.Message)
	buf = protocol.AppendMember(buf, "type", e.Type)
	buf = append(buf, `,"param":`...)
	buf = protocol.AppendStringOrNull(buf, e.Param)
	buf = protocol.AppendMember(buf, "code", string(e.Code))
	return append(buf, "}}\n"...)
}
