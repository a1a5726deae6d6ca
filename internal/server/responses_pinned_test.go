package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// responsesAnswerDigests are the SHA-256 (first 12 bytes) of each answer's status, content type
// and normalized body (normalize), as the server wrote them before the Responses path was made
// faster. A change meant to alter an answer gets the new digests from the test's failures, each a
// line of this map.
var responsesAnswerDigests = map[string]string{
	"case/text":                                                   "681ef552bc554a2615f60876",
	"case/text streamed":                                          "9c32f7f34bbe17bec676665b",
	"case/instructions and items":                                 "23fd51e75384f5230111b952",
	"case/instructions and items streamed":                        "1f9245eb1c9b241aa26a4a45",
	"case/max_output_tokens":                                      "98eec9917c1c7df30788ea84",
	"case/max_output_tokens streamed":                             "07d115d18815bad2d9f09b85",
	"case/function call":                                          "c5fa890fab447a6613c34dc4",
	"case/function call streamed":                                 "84550b4c0795dd686552fb15",
	"case/tool round trip":                                        "36d8716274b41f112c48128e",
	"case/tool round trip streamed":                               "6b43b1fd3c8e41bee732b9f2",
	"case/json_schema":                                            "04d35f50119e42b002892292",
	"case/json_schema streamed":                                   "0136dae431768a533c3c0376",
	"case/every echoed member":                                    "52f9002b06a15d6adcc33c70",
	"case/every echoed member streamed":                           "b2eb2edd2781d8be7fceb1d7",
	"request/load bench JSON":                                     "b82716491fab49bbf04a7b4d",
	"request/load bench stream":                                   "4602228310808e498376efda",
	"request/bench JSON":                                          "f3f8733a4c6c3e6cb7fd4001",
	"request/bench stream":                                        "1a3587514d85e34a78c65d75",
	"request/echoed members":                                      "63f56171a69842f8760258fb",
	"request/echoed whitespace":                                   "bcd7df802a52ddfd0dfe77df",
	"request/json_schema stream":                                  "be83b67542b5521b01b409b4",
	"request/parallel calls":                                      "bd7f29c715034d9d6bf6fd57",
	"request/parallel calls stream":                               "f00991208e479346da570a43",
	"request/refused":                                             "b50bf05eded1c0b95060333d",
	"request/unanswered output":                                   "e3ee901040b68187b908b43a",
	"request/unknown member":                                      "7153b7cb00ea0ef481ecf9e2",
	"request/invalid JSON":                                        "9fbd8db1b196a958f56fed3d",
	"client/codex-cli/tool_round_trip.json":                       "9c98ac0d94cfd60859cf76eb",
	"client/codex-cli/tools.json":                                 "dd741cd4668e63776eea122c",
	"client/langchain-js/multi_turn.json":                         "03c3cd72d3fa0e93351f29b8",
	"client/langchain-js/stream.json":                             "0550a19c597d0b50b8c8d2dc",
	"client/langchain-js/tool_round_trip.json":                    "314d0e38c8c0a94e2edf2ea6",
	"client/langchain-js/tools.json":                              "d24d6aa292566248dcf4de5a",
	"client/openai-agents-js/handoff.json":                        "b926077865bcab50f733a7db",
	"client/openai-agents-js/model_settings.json":                 "68b2c525a901a29b08ec440c",
	"client/openai-agents-js/multi_turn.json":                     "ce5c27cea36e6ee28e060a80",
	"client/openai-agents-js/output_type.json":                    "be2f16d5edc80cf3cff64145",
	"client/openai-agents-js/stream_tool_round_trip.json":         "94ea13edfb1af1161935e1ec",
	"client/openai-agents-js/stream_tools.json":                   "31affad7cd2b160094dff993",
	"client/openai-agents-js/text.json":                           "f99bf53475f9bec5796d5118",
	"client/openai-agents-js/tool_round_trip.json":                "3649f1d8d90bd3c9d374d5f5",
	"client/openai-agents-js/tools.json":                          "e0d1916defb0bb17eae6d327",
	"client/openai-agents-python/tool_round_trip.json":            "2e831d33a56179ae7ce15597",
	"client/openai-agents-python/tools.json":                      "4fa2227a3368b0fc5eec3c1c",
	"client/openai-go/json_schema.json":                           "e82f27e12ce468dbb143025c",
	"client/openai-go/max_output_tokens.json":                     "c0a469612d98802204bab722",
	"client/openai-go/stream.json":                                "9757522c4d0c12869cc90ceb",
	"client/openai-go/text.json":                                  "8f0c239dfce648ac3f039ae4",
	"client/openai-go/tool_round_trip.json":                       "a194a63dd74db2cedb551ab2",
	"client/openai-go/tool_round_trip_previous_response_id.json":  "b331094f35ddb0081ce4aa66",
	"client/openai-go/tools.json":                                 "8fc6a2d1050b534cdc9f1bc5",
	"client/openai-go/tools_readme.json":                          "8a61348c7e0a518a6ba2fe4f",
	"client/openai-node/json_schema.json":                         "91c8e9cc3c8f18983763982b",
	"client/openai-node/max_output_tokens.json":                   "2d0e01736bd3037af342bcd4",
	"client/openai-node/multi_turn.json":                          "e783839fcf84d356c4443b94",
	"client/openai-node/parse_zod.json":                           "f26f250d18beb35e06f016c8",
	"client/openai-node/previous_response_id.json":                "b331094f35ddb0081ce4aa66",
	"client/openai-node/stream.json":                              "8cbc14501e669743f1d20d34",
	"client/openai-node/stream_helper.json":                       "ef8712562d71ac8d8b0fd11f",
	"client/openai-node/stream_helper_tool_round_trip.json":       "d817b922296bcf123522843a",
	"client/openai-node/stream_helper_tools.json":                 "46d654b79952ce6e361d2190",
	"client/openai-node/text.json":                                "7737975e7ba87edf6761ee7e",
	"client/openai-node/tool_round_trip.json":                     "b011aac4e8263586f474805c",
	"client/openai-node/tools.json":                               "de0f9cad4304d4cccf081ffd",
	"client/openai-python/parse_pydantic_tool.json":               "80a17f1cc7ff3e82fe2880f2",
	"client/openai-python/text.json":                              "3ba7ec229ed66c1882507bd0",
	"client/openai-python/tool_round_trip.json":                   "93d6ee2c28251c6bb2ebab3e",
	"client/openai-python/tools.json":                             "022f9d28447856393c620dbd",
	"client/vercel-ai-sdk/multi_turn_item_reference.json":         "4313e1268f4d6bda208e6cb5",
	"client/vercel-ai-sdk/multi_turn_store_false.json":            "307d65251950dcb4dbf711ed",
	"client/vercel-ai-sdk/stream.json":                            "33c6a98157104ac110f00e92",
	"client/vercel-ai-sdk/structured_output.json":                 "41f52221d7ecd954c9a0b377",
	"client/vercel-ai-sdk/structured_output_generate_object.json": "41f52221d7ecd954c9a0b377",
	"client/vercel-ai-sdk/text.json":                              "11261dee5445819d4e768e51",
	"client/vercel-ai-sdk/tool_round_trip.json":                   "edb89e6cfe6ce36c5ddaf3f2",
	"client/vercel-ai-sdk/tools.json":                             "6c868ce9d8ba0ec4bfde9631",
}

// TestResponsesAnswersPinned holds the exact bytes of Responses answers — JSON, streams and
// errors, for varied requests and every recorded client body — to their digests from before the
// Responses path was made faster: a faster path must send the same bytes.
func TestResponsesAnswersPinned(t *testing.T) {
	h := newHarness(t)
	type pinned struct {
		name, body string
		header     []string
	}
	var cases []pinned
	for _, c := range responsesCases {
		cases = append(cases, pinned{"case/" + c.name, c.body, nil}, pinned{"case/" + c.name + " streamed", `{"stream":true,` + c.body[1:], nil})
	}
	for _, c := range pinnedResponsesRequests {
		cases = append(cases, pinned{"request/" + c.name, c.body, nil})
	}
	corpus := loadCorpusDir(t, "responses-clients")
	names := make([]string, 0, len(corpus))
	for name := range corpus {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		e := corpus[name]
		var hdr []string
		for k, v := range e.Headers {
			hdr = append(hdr, k, v)
		}
		cases = append(cases, pinned{"client/" + name, string(e.Body), hdr})
	}
	seen := map[string]bool{}
	for _, c := range cases {
		rr := h.do(http.MethodPost, "/v1/responses", c.body, c.header...)
		sum := sha256.Sum256([]byte(strconv.Itoa(rr.Code) + " " + rr.Header().Get("Content-Type") + "\n" + string(normalize(rr.Body.Bytes()))))
		got := hex.EncodeToString(sum[:12])
		seen[c.name] = true
		if want, ok := responsesAnswerDigests[c.name]; !ok || got != want {
			t.Errorf("%q: %q, // %d %s", c.name, got, rr.Code, firstLine(rr.Body.String()))
		}
	}
	for name := range responsesAnswerDigests {
		if !seen[name] {
			t.Errorf("%s: pinned but not sent", name)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}
