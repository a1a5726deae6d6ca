package server

import (
	"encoding/json"
	"strings"
	"testing"

	"mockgateway/internal/catalog"
)

// twoReasoners is a catalog with two reasoning models: what one sealed must not open for the
// other.
func twoReasoners(t *testing.T) func(*Deps) {
	t.Helper()
	cat, err := catalog.Parse([]byte("models:\n" +
		"  - {id: mock-reasoning, kind: mock, behavior: tools, capabilities: {streaming: true, tools: true, reasoning: true}}\n" +
		"  - {id: mock-thinker, kind: mock, behavior: tools, capabilities: {streaming: true, tools: true, reasoning: true}}\n" +
		"  - {id: mock-tools, kind: mock, behavior: tools, capabilities: {streaming: true, tools: true}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return func(d *Deps) { d.Catalog = cat }
}

// sealRefusal checks a refusal of a seal: 400 invalid_request_error with the code in the access
// log, the message given, and none of the values sent in the body.
func sealRefusal(t *testing.T, h *harness, name string, code int, body []byte, message string, values ...string) {
	t.Helper()
	var e struct {
		Error struct {
			Type, Message string
			Code          *string
			Param         *string
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || code != 400 || e.Error.Type != "invalid_request_error" || e.Error.Message != message || e.Error.Param != nil {
		t.Errorf("%s: %d %s\nwant 400 %q", name, code, body, message)
	}
	for _, v := range values {
		if v != "" && strings.Contains(string(body), v) {
			t.Errorf("%s: the refusal names a value sent: %s", name, body)
		}
	}
	recs := h.logs.records(t)
	if last := recs[len(recs)-1]; last["error_code"] != "invalid_encrypted_content" {
		t.Errorf("%s: error_code %v", name, last["error_code"])
	}
}

// nextResponsesTurn sends a reasoning item back to model, after the turn that made it.
func nextResponsesTurn(model, item string, stream bool) string {
	s := ""
	if stream {
		s = `"stream":true,`
	}
	return `{"model":"` + model + `",` + s + `"include":["reasoning.encrypted_content"],"store":false,"input":[{"role":"user","content":"Plan a trip"},` + item +
		`,{"role":"assistant","content":"Done."},{"role":"user","content":"And then?"}]}`
}

// withItemID is a reasoning item as JSON with its id set to id, or without one when id is "".
func withItemID(t *testing.T, rs map[string]any, id string) string {
	t.Helper()
	it := map[string]any{}
	for k, v := range rs {
		it[k] = v
	}
	delete(it, "id")
	if id != "" {
		it["id"] = id
	}
	b, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReasoningItemSealedForItsID: an item's encrypted content opens only under the id it was
// sealed for. Sent back with another id it is refused, as OpenAI refuses it ("Encrypted content
// item_id did not match the target item id"); sent back without an id, as the Codex CLI sends
// its items, it is taken. JSON and streamed requests alike.
func TestReasoningItemSealedForItsID(t *testing.T) {
	h := newHarness(t)
	rs := firstReasoningItem(t, h.do("POST", "/v1/responses", reasoningTurn).Body.Bytes())
	id, _ := rs["id"].(string)
	for _, stream := range []bool{false, true} {
		if rr := h.do("POST", "/v1/responses", nextResponsesTurn("mock-reasoning", withItemID(t, rs, id), stream)); rr.Code != 200 {
			t.Errorf("stream %t, its own id: %d %s", stream, rr.Code, rr.Body)
		}
		if rr := h.do("POST", "/v1/responses", nextResponsesTurn("mock-reasoning", withItemID(t, rs, ""), stream)); rr.Code != 200 {
			t.Errorf("stream %t, no id: %d %s", stream, rr.Code, rr.Body)
		}
		for _, forged := range []string{"rs_forged", id + "0", "rs_" + strings.ToUpper(id[3:])} {
			rr := h.do("POST", "/v1/responses", nextResponsesTurn("mock-reasoning", withItemID(t, rs, forged), stream))
			sealRefusal(t, h, "stream "+map[bool]string{false: "off", true: "on"}[stream]+", id "+forged, rr.Code, rr.Body.Bytes(),
				"The encrypted content for the reasoning item at input[1] could not be verified. Reason: Encrypted content item_id did not match the target item id.",
				forged)
		}
	}
}

// TestReasoningItemSealedForItsModel: in a catalog with two reasoning models, an item one made
// is refused by the other, as a Responses deployment refuses another's ("Encrypted content could
// not be decrypted or parsed"); the model that made it takes it, and a model that does not
// reason ignores it. JSON and streamed requests alike.
func TestReasoningItemSealedForItsModel(t *testing.T) {
	h := newHarness(t, twoReasoners(t))
	rs := firstReasoningItem(t, h.do("POST", "/v1/responses", reasoningTurn).Body.Bytes())
	item := withItemID(t, rs, rs["id"].(string))
	for _, stream := range []bool{false, true} {
		if rr := h.do("POST", "/v1/responses", nextResponsesTurn("mock-reasoning", item, stream)); rr.Code != 200 {
			t.Errorf("stream %t, the model that made it: %d %s", stream, rr.Code, rr.Body)
		}
		if rr := h.do("POST", "/v1/responses", nextResponsesTurn("mock-tools", item, stream)); rr.Code != 200 {
			t.Errorf("stream %t, a model that does not reason: %d %s", stream, rr.Code, rr.Body)
		}
		for _, it := range []string{item, withItemID(t, rs, "")} {
			rr := h.do("POST", "/v1/responses", nextResponsesTurn("mock-thinker", it, stream))
			sealRefusal(t, h, "another reasoning model", rr.Code, rr.Body.Bytes(),
				"The encrypted content for the reasoning item at input[1] could not be verified. Reason: Encrypted content could not be decrypted or parsed.")
		}
	}
}
