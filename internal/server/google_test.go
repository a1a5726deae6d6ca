package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Google's Gemini dialect (internal/dialect/google): its routes under /v1beta and /v1, its
// answers, streams and errors byte for byte (testdata/google, apart from the goldens the OpenAPI
// document describes), and the rules its clients hold it to.

const geminiTools = `"tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]`

func geminiBody(extra string) string {
	b := `{"contents":[{"role":"user","parts":[{"text":"weather?"}]}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func geminiPath(version, model, method string) string {
	return "/" + version + "/models/" + model + ":" + method
}

var thoughtSignature = regexp.MustCompile(`"thoughtSignature":"[^"]*"`)

var googleKeyHeader = []string{"X-Goog-Api-Key", "dummy"}

func TestGoogleGolden(t *testing.T) {
	h := newHarness(t)
	cases := []struct{ name, path, body string }{
		{"google/json.golden", geminiPath("v1beta", "mock-chat", "generateContent"), `{"systemInstruction":{"role":"user","parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":16}}`},
		{"google/echo_stream.golden", geminiPath("v1beta", "mock-echo", "streamGenerateContent") + "?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"Say hello to the world"}]}],"generationConfig":{}}`},
		{"google/tools_stream.golden", geminiPath("v1", "mock-tools", "streamGenerateContent") + "?alt=sse", geminiBody(geminiTools)},
		{"google/tools_json.golden", geminiPath("v1", "mock-tools", "generateContent"), geminiBody(geminiTools)},
		{"google/thinking_json.golden", geminiPath("v1beta", "mock-reasoning", "generateContent"), geminiBody(geminiTools + `,"generationConfig":{"thinkingConfig":{"includeThoughts":true}}`)},
		{"google/thinking_stream.golden", geminiPath("v1beta", "mock-reasoning", "streamGenerateContent") + "?alt=sse", geminiBody(`"generationConfig":{"maxOutputTokens":300,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"LOW"}}`)},
		{"google/array.golden", geminiPath("v1", "mock-echo", "streamGenerateContent"), geminiBody("")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rr := h.do("POST", c.path, c.body, googleKeyHeader...)
			if rr.Code != 200 {
				t.Fatalf("%d %s", rr.Code, rr.Body.String())
			}
			// The signature is sealed with the harness's own random key.
			golden(t, c.name, thoughtSignature.ReplaceAll(rr.Body.Bytes(), []byte(`"thoughtSignature":"SIGNATURE"`)))
		})
	}
	golden(t, "google/models.golden", h.do("GET", "/v1beta/models", "").Body.Bytes())
	golden(t, "google/error.golden", h.do("POST", geminiPath("v1beta", "mock-chat", "generateContent"), `{"contents":[],"bogus":1}`, googleKeyHeader...).Body.Bytes())
}

// TestGoogleStreamFraming holds a Gemini stream to what the Go SDK's reader takes: data: lines
// and blank lines only, each line a whole response with a content, its role and parts; the last
// carries finishReason and usageMetadata.
func TestGoogleStreamFraming(t *testing.T) {
	h := newHarness(t)
	for _, body := range []string{geminiBody(""), geminiBody(geminiTools), geminiBody(`"generationConfig":{"candidateCount":2}`)} {
		for _, model := range []string{"mock-chat", "mock-tools", "mock-reasoning"} {
			rr := h.do("POST", geminiPath("v1beta", model, "streamGenerateContent")+"?alt=sse", body, googleKeyHeader...)
			if rr.Code != 200 || !strings.HasPrefix(rr.Header().Get("Content-Type"), "text/event-stream") {
				t.Fatalf("%s: %d %s", model, rr.Code, rr.Body.String())
			}
			raw := rr.Body.String()
			if !strings.HasSuffix(raw, "\r\n\r\n") {
				t.Fatalf("%s: the stream does not end with a separator", model)
			}
			events := strings.Split(strings.TrimSuffix(raw, "\r\n\r\n"), "\r\n\r\n")
			for i, ev := range events {
				data, ok := strings.CutPrefix(ev, "data: ")
				if !ok || strings.ContainsAny(data, "\r\n") {
					t.Fatalf("%s: event %d is not one data line: %q", model, i, ev)
				}
				var r struct {
					Candidates []struct {
						Content *struct {
							Role  string            `json:"role"`
							Parts []json.RawMessage `json:"parts"`
						} `json:"content"`
						FinishReason string `json:"finishReason"`
					} `json:"candidates"`
					Usage *struct {
						Prompt, Total int
					} `json:"usageMetadata"`
				}
				if err := json.Unmarshal([]byte(data), &r); err != nil {
					t.Fatalf("%s: %v: %s", model, err, data)
				}
				c := r.Candidates[0]
				if c.Content == nil || c.Content.Role != "model" || len(c.Content.Parts) == 0 {
					t.Fatalf("%s: event %d has no content with a role and parts: %s", model, i, data)
				}
				if last := i == len(events)-1; last != (r.Usage != nil) || (last && c.FinishReason == "") {
					t.Fatalf("%s: event %d of %d: usage and the finish go in the last only: %s", model, i, len(events), data)
				}
			}
		}
	}
}

func TestGoogleCountTokensMatchesTheAnswer(t *testing.T) {
	h := newHarness(t)
	body := `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"How many tokens is this prompt?"}]}],` + geminiTools + `}`
	var answer struct {
		Usage struct {
			Prompt int `json:"promptTokenCount"`
		} `json:"usageMetadata"`
	}
	rr := h.do("POST", geminiPath("v1", "mock-tools", "generateContent"), body, googleKeyHeader...)
	if err := json.Unmarshal(rr.Body.Bytes(), &answer); err != nil || answer.Usage.Prompt == 0 {
		t.Fatalf("%v %s", err, rr.Body.String())
	}
	for _, count := range []string{body, `{"generateContentRequest":` + body + `}`} {
		rr := h.do("POST", geminiPath("v1", "mock-tools", "countTokens"), count, googleKeyHeader...)
		var c struct{ TotalTokens int }
		if err := json.Unmarshal(rr.Body.Bytes(), &c); err != nil || c.TotalTokens != answer.Usage.Prompt {
			t.Fatalf("countTokens %s, the answer's promptTokenCount %d", rr.Body.String(), answer.Usage.Prompt)
		}
	}
}

func TestGoogleErrors(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		googleStatus             string
	}{
		{"unknown member", "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(`"generationConfig":{"temprature":1}`), googleKeyHeader, 400, "INVALID_ARGUMENT"},
		{"unknown model", "POST", geminiPath("v1", "gemini-9", "generateContent"), geminiBody(""), googleKeyHeader, 404, "NOT_FOUND"},
		{"another method", "POST", geminiPath("v1beta", "mock-chat", "embedContent"), geminiBody(""), googleKeyHeader, 404, "NOT_FOUND"},
		{"another method, no key header", "POST", geminiPath("v1", "mock-chat", "batchGenerateContent"), geminiBody(""), nil, 404, "NOT_FOUND"},
		{"GET on a POST method", "GET", geminiPath("v1beta", "mock-chat", "generateContent"), "", nil, 405, "UNIMPLEMENTED"},
		{"rate limited", "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(""), append([]string{"X-Mock-Fault", "rate_limit;retry_after=3s"}, googleKeyHeader...), 429, "RESOURCE_EXHAUSTED"},
		{"unavailable", "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(""), append([]string{"X-Mock-Fault", "unavailable"}, googleKeyHeader...), 503, "UNAVAILABLE"},
		{"budget over the output limit", "POST", geminiPath("v1", "mock-chat", "generateContent"), geminiBody(`"generationConfig":{"maxOutputTokens":40000}`), googleKeyHeader, 400, "INVALID_ARGUMENT"},
		{"server tools", "POST", geminiPath("v1beta", "mock-tools", "generateContent"), geminiBody(`"tools":[{"googleSearch":{}}]`), googleKeyHeader, 400, "INVALID_ARGUMENT"},
		{"function response without its call", "POST", geminiPath("v1beta", "mock-tools", "generateContent"), `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, googleKeyHeader, 400, "INVALID_ARGUMENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rr := h.do(c.method, c.path, c.body, c.header...)
			checkGoogleError(t, rr, c.status, c.googleStatus)
		})
	}
	t.Run("retry info", func(t *testing.T) {
		rr := h.do("POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(""), append([]string{"X-Mock-Fault", "rate_limit;retry_after=3s"}, googleKeyHeader...)...)
		if got := rr.Header().Get("Retry-After"); got != "3" {
			t.Errorf("retry-after %q", got)
		}
		if !strings.Contains(rr.Body.String(), `"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]`) {
			t.Errorf("no RetryInfo detail: %s", rr.Body.String())
		}
	})
	t.Run("a budget within the output limit, above --max-tokens", func(t *testing.T) {
		rr := h.do("POST", geminiPath("v1", "mock-echo", "generateContent"), geminiBody(`"generationConfig":{"maxOutputTokens":32000}`), googleKeyHeader...)
		if rr.Code != 200 {
			t.Fatalf("%d %s", rr.Code, rr.Body.String())
		}
	})
	t.Run("405 allows POST", func(t *testing.T) {
		rr := h.do("GET", geminiPath("v1", "mock-chat", "streamGenerateContent"), "")
		if rr.Code != 405 || rr.Header().Get("Allow") != "POST" {
			t.Fatalf("%d allow %q", rr.Code, rr.Header().Get("Allow"))
		}
	})
}

// checkGoogleError holds an error to Google's envelope: {"error":{"code","message","status","details"}}, as JSON.
func checkGoogleError(t *testing.T, rr *httptest.ResponseRecorder, status int, googleStatus string) {
	t.Helper()
	if rr.Code != status || rr.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d (%s), want %d: %s", rr.Code, rr.Header().Get("Content-Type"), status, rr.Body.String())
	}
	var e struct {
		Error *struct {
			Code    int               `json:"code"`
			Message string            `json:"message"`
			Status  string            `json:"status"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(rr.Body.String()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == nil || e.Error.Code != status || e.Error.Status != googleStatus || e.Error.Message == "" || e.Error.Details == nil {
		t.Fatalf("not Google's envelope with %s: %v %s", googleStatus, err, rr.Body.String())
	}
}

// Google's refusals of a key, byte for byte as Google's API answers them (docs/protocol.md's
// Gemini section cites the captures): a key that is not the key, and no key at all.
const (
	googleKeyInvalid = `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}},{"@type":"type.googleapis.com/google.rpc.LocalizedMessage","locale":"en-US","message":"API key not valid. Please pass a valid API key."}]}}` + "\n"
	googleKeyMissing = `{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED","details":[]}}` + "\n"
)

// TestGoogleKey: with --api-key, a Gemini client's key is taken from x-goog-api-key, the key
// query parameter (Google's REST examples) or Authorization; a wrong key is Google's 400
// API_KEY_INVALID and none its 403, byte for byte, and the access log and the metrics record the
// status the client saw with the closed set's code.
func TestGoogleKey(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Config.APIKey = "sekret" })
	path := geminiPath("v1beta", "mock-chat", "generateContent")
	for _, c := range []struct {
		name, path string
		header     []string
	}{
		{"x-goog-api-key", path, []string{"X-Goog-Api-Key", "sekret"}},
		{"the key query parameter", path + "?key=sekret", nil},
		{"the key query parameter of a stream", geminiPath("v1", "mock-chat", "streamGenerateContent") + "?alt=sse&key=sekret", nil},
		{"authorization", path, []string{"Authorization", "Bearer sekret"}},
	} {
		if rr := h.do("POST", c.path, geminiBody(""), c.header...); rr.Code != 200 {
			t.Errorf("the right key in %s: %d %s", c.name, rr.Code, rr.Body.String())
		}
	}
	if rr := h.do("GET", "/v1beta/models?key=sekret", ""); rr.Code != 200 {
		t.Errorf("the model list with the key query parameter: %d %s", rr.Code, rr.Body.String())
	}
	for _, c := range []struct {
		name, path string
		header     []string
		status     int
		body, code string
	}{
		{"a wrong x-goog-api-key", path, []string{"X-Goog-Api-Key", "wrong"}, 400, googleKeyInvalid, "invalid_api_key"},
		{"a wrong key query parameter", path + "?key=wrong", nil, 400, googleKeyInvalid, "invalid_api_key"},
		{"a wrong key query parameter beside the right header", path + "?key=wrong", []string{"X-Goog-Api-Key", "sekret"}, 200, "", ""},
		{"a wrong bearer token", path + "?key=sekret", []string{"Authorization", "Bearer wrong"}, 400, googleKeyInvalid, "invalid_api_key"},
		{"no key", path, nil, 403, googleKeyMissing, "missing_api_key"},
		{"an empty key query parameter", path + "?key=", nil, 403, googleKeyMissing, "missing_api_key"},
	} {
		rr := h.do("POST", c.path, geminiBody(""), c.header...)
		if c.status == 200 {
			if rr.Code != 200 {
				t.Errorf("%s: %d %s", c.name, rr.Code, rr.Body.String())
			}
			continue
		}
		if rr.Code != c.status || rr.Body.String() != c.body || rr.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s\nwant %d %s", c.name, rr.Code, rr.Body.String(), c.status, c.body)
		}
		if n := metricValue(t, h.metrics, "mockgateway_http_requests_total", map[string]string{"status_code": fmt.Sprint(c.status), "error_code": c.code}); n == 0 {
			t.Errorf("%s: no request counted with status %d and %s", c.name, c.status, c.code)
		}
	}
	logged := map[string]bool{}
	for _, m := range h.logs.records(t) {
		if code, ok := m["error_code"].(string); ok && m["status"] != nil {
			logged[fmt.Sprint(m["status"])+" "+code] = true
		}
	}
	if !logged["400 invalid_api_key"] || !logged["403 missing_api_key"] || logged["401 invalid_api_key"] || logged["401 missing_api_key"] {
		t.Errorf("the access log's statuses and codes: %v", logged)
	}
	// The key query parameter is Google's alone: OpenAI's routes take no key from the query.
	if rr := h.do("POST", chatPath+"?key=sekret", chatBody("mock-chat", "")); rr.Code != 401 {
		t.Errorf("chat with the key in its query: %d %s", rr.Code, rr.Body.String())
	}
}

// TestGoogleModelList: GET /v1/models answers in Google's shape with x-goog-api-key, OpenAI's
// without; /v1beta/models always Google's; pages follow nextPageToken.
func TestGoogleModelList(t *testing.T) {
	h := newHarness(t)
	if body := h.do("GET", "/v1/models", "").Body.String(); !strings.Contains(body, `"object":"list"`) {
		t.Fatalf("OpenAI's list without the key header: %s", body)
	}
	var names []string
	token := ""
	for range 20 {
		rr := h.do("GET", "/v1/models?pageSize=2&pageToken="+token, "", googleKeyHeader...)
		var page struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
			NextPageToken string `json:"nextPageToken"`
		}
		if err := json.Unmarshal(rr.Body.Bytes(), &page); err != nil || len(page.Models) == 0 || len(page.Models) > 2 {
			t.Fatalf("%v %s", err, rr.Body.String())
		}
		for _, m := range page.Models {
			names = append(names, m.Name)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	all := h.do("GET", "/v1beta/models", "").Body.String()
	for _, n := range names {
		if !strings.HasPrefix(n, "models/mock-") || !strings.Contains(all, `"name":"`+n+`"`) {
			t.Fatalf("paged %q, whole list %s", names, all)
		}
	}
	if rr := h.do("GET", "/v1beta/models/mock-tools", ""); !strings.Contains(rr.Body.String(), `"name":"models/mock-tools"`) {
		t.Fatalf("%d %s", rr.Code, rr.Body.String())
	}
	checkGoogleError(t, h.do("GET", "/v1/models/gemini-9", "", googleKeyHeader...), 404, "NOT_FOUND")
}

// TestGoogleDecoding: snake_case reads as camelCase, the Go SDK's OpenAPI schemas and the
// function-calling modes.
func TestGoogleDecoding(t *testing.T) {
	h := newHarness(t)
	ok := []struct{ name, model, body string }{
		{"snake_case", "mock-chat", `{"system_instruction":{"parts":[{"text":"x"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generation_config":{"max_output_tokens":8,"stop_sequences":["z"],"response_mime_type":"text/plain","thinking_config":{"include_thoughts":true}},"safety_settings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`},
		{"OpenAPI parameters", "mock-tools", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"n":{"type":"INTEGER","nullable":true},"s":{"type":"STRING","enum":["a","b"]}},"required":["s"],"propertyOrdering":["n","s"]}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}}`},
		{"responseSchema", "mock-chat", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"required":["a"]}}}`},
		{"responseJsonSchema", "mock-chat", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`},
		{"inline data", "mock-chat", `{"contents":[{"role":"user","parts":[{"text":"what is it?"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},{"fileData":{"mimeType":"application/pdf","fileUri":"gs://b/f.pdf"}}]}]}`},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			rr := h.do("POST", geminiPath("v1beta", c.model, "generateContent"), c.body, googleKeyHeader...)
			if rr.Code != 200 {
				t.Fatalf("%d %s", rr.Code, rr.Body.String())
			}
			if c.name == "OpenAPI parameters" && !strings.Contains(rr.Body.String(), `"functionCall":{"name":"f","args":{`) {
				t.Fatalf("ANY with one allowed name calls it: %s", rr.Body.String())
			}
			if strings.HasPrefix(c.name, "response") {
				var r struct {
					Candidates []struct {
						Content struct{ Parts []struct{ Text string } }
					}
				}
				_ = json.Unmarshal(rr.Body.Bytes(), &r)
				var v map[string]any
				if err := json.Unmarshal([]byte(r.Candidates[0].Content.Parts[0].Text), &v); err != nil || v["a"] == nil {
					t.Fatalf("the text is no instance of the schema: %s", rr.Body.String())
				}
			}
		})
	}
	if rr := h.do("POST", geminiPath("v1beta", "mock-chat", "generateContent"), `{"contents":[{"role":"user","parts":[{"text":"a","inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}`, googleKeyHeader...); rr.Code != 400 {
		t.Fatalf("a part with two data members: %d %s", rr.Code, rr.Body.String())
	}
}

// TestGoogleThoughtSignature: the first function call's thoughtSignature is standard base64, it
// opens when sent back with its call, a changed one is refused, and Gemini CLI's skip value is
// accepted.
func TestGoogleThoughtSignature(t *testing.T) {
	h := newHarness(t)
	path := geminiPath("v1beta", "mock-reasoning", "generateContent")
	rr := h.do("POST", path, geminiBody(geminiTools), googleKeyHeader...)
	sig := regexp.MustCompile(`"thoughtSignature":"([^"]+)"`).FindStringSubmatch(rr.Body.String())
	if sig == nil || !regexp.MustCompile(`^[A-Za-z0-9+/]+=*$`).MatchString(sig[1]) {
		t.Fatalf("no standard base64 thoughtSignature: %s", rr.Body.String())
	}
	back := func(signature string) *httptest.ResponseRecorder {
		return h.do("POST", path, `{"contents":[{"role":"user","parts":[{"text":"weather?"}]},{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Oslo"}},"thoughtSignature":"`+signature+`"}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":3}}}]}],`+geminiTools+`}`, googleKeyHeader...)
	}
	if rr := back(sig[1]); rr.Code != 200 || !strings.Contains(rr.Body.String(), "Based on the tool result") {
		t.Fatalf("its own signature: %d %s", rr.Code, rr.Body.String())
	}
	if rr := back("skip_thought_signature_validator"); rr.Code != 200 {
		t.Fatalf("the skip value: %d %s", rr.Code, rr.Body.String())
	}
	forged := "A" + sig[1][1:]
	if forged == sig[1] {
		forged = "B" + sig[1][1:]
	}
	checkGoogleError(t, back(forged), 400, "INVALID_ARGUMENT")
}

// TestGoogleThinkingBudget: mock-reasoning thinks by default, not with thinkingBudget 0, and
// less at LOW than at HIGH.
func TestGoogleThinkingBudget(t *testing.T) {
	h := newHarness(t)
	thoughts := func(config string) int {
		rr := h.do("POST", geminiPath("v1beta", "mock-reasoning", "generateContent"), geminiBody(`"generationConfig":{"thinkingConfig":`+config+`}`), googleKeyHeader...)
		var r struct {
			Usage struct {
				Thoughts int `json:"thoughtsTokenCount"`
			} `json:"usageMetadata"`
		}
		if err := json.Unmarshal(rr.Body.Bytes(), &r); err != nil || rr.Code != 200 {
			t.Fatalf("%v %s", err, rr.Body.String())
		}
		return r.Usage.Thoughts
	}
	if thoughts(`{}`) == 0 || thoughts(`{"thinkingBudget":0}`) != 0 || thoughts(`{"thinkingLevel":"LOW"}`) >= thoughts(`{"thinkingLevel":"HIGH"}`) {
		t.Fatal("thinking does not follow thinkingConfig")
	}
}

// TestGoogleClientCorpus sends every recorded Gemini client request (testdata/google-clients)
// to the route it was sent to, with the client's headers: each is answered 200, a stream that
// ends with a finishReason and no error.
func TestGoogleClientCorpus(t *testing.T) {
	corpus := loadCorpusDir(t, "google-clients")
	if len(corpus) == 0 {
		t.Fatal("no client corpus under testdata/google-clients")
	}
	h := newHarness(t)
	for name, e := range corpus {
		t.Run(name, func(t *testing.T) {
			var hdr []string
			for k, v := range e.Headers {
				hdr = append(hdr, k, v)
			}
			rr := h.do(http.MethodPost, geminiPath("v1beta", "mock-tools", "streamGenerateContent")+"?alt=sse", string(e.Body), hdr...)
			if rr.Code != http.StatusOK {
				t.Fatalf("%s %s (%s): status %d: %s", e.Client, e.Version, e.Case, rr.Code, rr.Body.String())
			}
			body := rr.Body.String()
			if strings.Contains(body, `"error"`) || !strings.Contains(body, `"finishReason":"STOP"`) {
				t.Fatalf("stream did not end cleanly:\n%s", body)
			}
			if e.Calls != nil {
				var called []string
				for _, m := range regexp.MustCompile(`"functionCall":\{"name":"([^"]+)"`).FindAllStringSubmatch(body, -1) {
					called = append(called, m[1])
				}
				checkCalls(t, *e.Calls, called)
			}
		})
	}
}

// conformGoogle sends TestOpenAPIResponsesConform the Gemini routes' answers — JSON, streamed,
// the JSON array, counts, model lists, errors, on /v1beta and /v1 — to hold to the document:
// status, headers, media type and body (every data line of a stream, which ends without [DONE]).
func conformGoogle(h *harness, do func(hh *harness, method, path, body string, header ...string) *httptest.ResponseRecorder) {
	key := googleKeyHeader
	for _, v := range []string{"v1beta", "v1"} {
		do(h, "POST", geminiPath(v, "mock-chat", "generateContent"), geminiBody(""), key...)
		do(h, "POST", geminiPath(v, "mock-tools", "generateContent"), geminiBody(geminiTools), key...)
		do(h, "POST", geminiPath(v, "mock-reasoning", "generateContent"), geminiBody(geminiTools+`,"generationConfig":{"thinkingConfig":{"includeThoughts":true}}`), key...)
		do(h, "POST", geminiPath(v, "mock-reasoning", "streamGenerateContent")+"?alt=sse", geminiBody(`"generationConfig":{"candidateCount":2,"thinkingConfig":{"includeThoughts":true}}`), key...)
		do(h, "POST", geminiPath(v, "mock-tools", "streamGenerateContent")+"?alt=sse", geminiBody(geminiTools), key...)
		do(h, "POST", geminiPath(v, "mock-chat", "streamGenerateContent")+"?alt=sse", geminiBody(""), append([]string{"X-Mock-Fault", "stream_error;after=2"}, key...)...)
		do(h, "POST", geminiPath(v, "mock-echo", "streamGenerateContent"), geminiBody(""), key...)
		do(h, "POST", geminiPath(v, "mock-echo", "countTokens"), geminiBody(""), key...)
		do(h, "POST", geminiPath(v, "gemini-9", "generateContent"), geminiBody(""), key...)
		do(h, "GET", geminiPath(v, "mock-chat", "countTokens"), "", key...)
	}
	do(h, "GET", "/v1beta/models?pageSize=3", "")
	do(h, "GET", "/v1/models", "", key...)
	do(h, "GET", "/v1beta/models/mock-tools", "")
	do(h, "GET", "/v1/models/mock-tools", "", key...)
	do(h, "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(`"cnry":1`), key...)
	do(h, "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(""), append([]string{"X-Mock-Fault", "rate_limit;retry_after=2s"}, key...)...)
	do(h, "POST", geminiPath("v1beta", "mock-chat", "streamGenerateContent")+"?alt=sse", geminiBody(""), append([]string{"X-Mock-Fault", "unavailable"}, key...)...)
	// A simulated quota: an answer, then the refusal with its QuotaFailure, Help and RetryInfo;
	// and one too large, without a RetryInfo.
	quota := []string{"X-Mock-Quota", "rpm=1;tpm=1000", "X-Goog-Api-Key", "conform-quota"}
	do(h, "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(""), quota...)
	do(h, "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(""), quota...)
	do(h, "POST", geminiPath("v1beta", "mock-chat", "generateContent"), geminiBody(`"generationConfig":{"maxOutputTokens":2000}`), "X-Mock-Quota", "tpm=1000", "X-Goog-Api-Key", "conform-large")
}

// TestGoogleStreamCountsCallTokens: a function call comes whole in one response, and the tokens
// its arguments are count as the usage counts them — in the journal, the logs and the metrics,
// as in the other dialects' streams, which send a delta per token.
func TestGoogleStreamCountsCallTokens(t *testing.T) {
	h := newHarness(t, journaled)
	rr := h.do("POST", geminiPath("v1", "mock-tools", "streamGenerateContent")+"?alt=sse", geminiBody(geminiTools), googleKeyHeader...)
	usage := regexp.MustCompile(`"candidatesTokenCount":(\d+)`).FindStringSubmatch(rr.Body.String())
	if usage == nil || usage[1] == "1" {
		t.Fatalf("no usage of a call's tokens: %s", rr.Body.String())
	}
	var journal struct {
		Data []struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal(h.do("GET", "/_mock/journal", "").Body.Bytes(), &journal); err != nil || len(journal.Data) != 1 {
		t.Fatalf("%v %+v", err, journal)
	}
	if got := journal.Data[0].CompletionTokens; fmt.Sprint(got) != usage[1] {
		t.Fatalf("the journal counts %d completion tokens, the usage %s", got, usage[1])
	}
}

// TestGoogleQueryKeyQuota: a client that sends its key in the key query parameter draws from
// the same organization's buckets as the same key in x-goog-api-key (and as its bearer token).
func TestGoogleQueryKeyQuota(t *testing.T) {
	h := newHarness(t)
	d := loadAPIDoc(t)
	scope := "google-query-key"
	in := []string{"X-Mock-Scope", scope, "X-Mock-Quota", "rpm=5;window=10s"}
	path := geminiPath("v1beta", "mock-chat", "generateContent")
	for _, c := range []struct {
		path   string
		header []string
	}{
		{path, []string{"X-Goog-Api-Key", "sk-quota-google"}},
		{path + "?key=sk-quota-google", nil},
		{path, []string{"Authorization", "Bearer sk-quota-google"}},
	} {
		if rr := h.do("POST", c.path, geminiBody(""), append(c.header, in...)...); rr.Code != 200 {
			t.Fatalf("%s %v: %d %s", c.path, c.header, rr.Code, rr.Body.String())
		}
	}
	got := readQuotas(t, h, d, "?scope="+scope)
	if len(got) != 1 || got[0].Requests == nil || got[0].Requests.Remaining != 2 {
		t.Fatalf("one organization with 2 requests left, wanted: %+v", got)
	}
}

// TestGoogleQueryKeyOnlyOnGoogleRoutes: the key query parameter is Google's routes' alone — an
// empty x-goog-api-key does not make a shared route or the control surface Google's, so a
// ?key= there is no key.
func TestGoogleQueryKeyOnlyOnGoogleRoutes(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Config.APIKey = "sekret" })
	for _, p := range []string{"/v1/models?key=sekret", "/_mock/journal?key=sekret", "/debug/traces?key=sekret", "/_mock/quotas?key=sekret"} {
		req := httptest.NewRequest("GET", p, nil)
		req.Header["X-Goog-Api-Key"] = []string{""}
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, req)
		if w.Code != 401 {
			t.Errorf("%s with an empty x-goog-api-key: %d, want 401", p, w.Code)
		}
	}
}

// TestMethodNotAllowedNamesItsRoute: a 405 names the route as its own answers do — the
// template, not the router's pattern — and on Google's /v1beta routes, as on /v1, a missing
// key is refused first, in the route's dialect.
func TestMethodNotAllowedNamesItsRoute(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Config.APIKey = "sekret" })
	rr := h.do("GET", geminiPath("v1beta", "mock-chat", "generateContent"), "")
	checkGoogleError(t, rr, 403, "PERMISSION_DENIED")
	rr = h.do("GET", geminiPath("v1beta", "mock-chat", "generateContent"), "", "X-Goog-Api-Key", "sekret")
	if rr.Code != 405 || rr.Header().Get("Allow") != "POST" {
		t.Fatalf("with the key: %d allow %q", rr.Code, rr.Header().Get("Allow"))
	}
	if rec := lastAccess(t, h); strings.Contains(rec["route"].(string), "[") {
		t.Errorf("access line route %q: the router's pattern", rec["route"])
	}
}
