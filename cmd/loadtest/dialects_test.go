package main

import (
	"slices"
	"strings"
	"testing"
)

// Each row of loadDialects reads its own stream: text deltas, the final event, no [DONE], and a
// failure event refused; and its load kinds are accepted by --load-kinds.
func TestLoadDialects(t *testing.T) {
	streams := map[string]struct{ ok, failing string }{
		"responses": {
			ok: "event: response.created\ndata: {\"type\":\"response.created\"}\n\n" +
				"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"echo:\"}\n\n" +
				"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" hi\"}\n\n" +
				"event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n",
			failing: "event: error\ndata: {\"type\":\"error\",\"code\":\"x\"}\n\n",
		},
		"messages": {
			ok: "event: message_start\ndata: {\"type\":\"message_start\"}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"echo:\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\" hi\"}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			failing: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}\n\n",
		},
		"gemini": {
			ok: "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"}}]}\r\n\r\n" +
				"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"echo:\"}],\"role\":\"model\"}}]}\r\n\r\n" +
				"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" hi\"}],\"role\":\"model\"}}]}\r\n\r\n" +
				"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}]}\r\n\r\n",
			failing: "data: {\"error\":{\"code\":500,\"status\":\"INTERNAL\"}}\r\n\r\n",
		},
	}
	kinds := loadKinds()
	for _, d := range loadDialects() {
		s, ok := streams[d.kind]
		if !ok {
			t.Errorf("%s: no stream to read in this test", d.kind)
			continue
		}
		shape, err := d.shapeOf([]byte(s.ok))
		if err != nil || shape.Events != 4 || shape.Deltas != 2 || !shape.Ended || shape.DoneFrame {
			t.Errorf("%s: %+v, %v", d.kind, shape, err)
		}
		if _, err := d.shapeOf([]byte(s.failing)); err == nil || !strings.Contains(err.Error(), "error event") {
			t.Errorf("%s: a failure event read as %v", d.kind, err)
		}
		if !slices.Contains(kinds, d.kind+"-json") || !slices.Contains(kinds, d.kind+"-stream") {
			t.Errorf("%s: its kinds are not in %v", d.kind, kinds)
		}
	}
}
