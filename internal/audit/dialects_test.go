package audit

import "testing"

// Each dialect with named events reads its stream: the event that ends it, and a failure kept
// as an error frame, named as its envelope names it; an event that is not JSON is kept too.
func TestDialectStreams(t *testing.T) {
	streams := map[string]struct {
		ok, failing, code string
	}{
		"responses": {
			ok:      "event: response.created\ndata: {\"type\":\"response.created\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\"}\n\n",
			failing: "event: response.created\ndata: {\"type\":\"response.created\"}\n\nevent: error\ndata: {\"type\":\"error\",\"code\":\"simulated_stream_error\"}\n\ndata: not json\n\n",
			code:    "simulated_stream_error",
		},
		"messages": {
			ok:      "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			failing: "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}\n\ndata: not json\n\n",
			code:    "api_error",
		},
		"gemini": {
			ok:      "data: {\"candidates\":[]}\r\n\r\ndata: {\"candidates\":[],\"usageMetadata\":{}}\r\n\r\n",
			failing: "data: {\"candidates\":[]}\r\n\r\ndata: {\"error\":{\"code\":500,\"status\":\"INTERNAL\"}}\r\n\r\ndata: not json\r\n\r\n",
			code:    "internal",
		},
	}
	names := map[string]bool{}
	for _, d := range dialects() {
		if names[d.name] {
			t.Errorf("two rows named %s", d.name)
		}
		names[d.name] = true
		if d.event == nil {
			continue
		}
		s, ok := streams[d.name]
		if !ok {
			t.Errorf("%s: no stream to read in this test", d.name)
			continue
		}
		if st := readNamedEvents([]byte(s.ok), d.event); !st.Done || st.Events != 2 || len(st.ErrorFrames) != 0 {
			t.Errorf("%s: %+v", d.name, st)
		}
		st := readNamedEvents([]byte(s.failing), d.event)
		if st.Done || st.Events != 3 || len(st.ErrorFrames) != 2 || st.ErrorCode != s.code {
			t.Errorf("%s failing: done %v, %d events, %d error frames, code %q", d.name, st.Done, st.Events, len(st.ErrorFrames), st.ErrorCode)
		}
	}
}
