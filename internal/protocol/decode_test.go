package protocol

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"mockgateway/internal/apierr"
)

// Bodies are built from a valid minimal request so that each row exercises one rule.
const (
	minimalFields   = `"model":"mock-echo","messages":[{"role":"user","content":"hi"}]`
	weatherToolJSON = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}`
)

// reqWith is a valid request plus extra top-level fields.
func reqWith(extra string) string { return "{" + minimalFields + "," + extra + "}" }

// reqWithMessages is a valid request whose messages are the given ones.
func reqWithMessages(ms ...string) string {
	return `{"model":"mock-echo","messages":[` + strings.Join(ms, ",") + `]}`
}

// reqWithUserParts is a request with one user message whose content is the given parts.
func reqWithUserParts(parts string) string {
	return reqWithMessages(`{"role":"user","content":[` + parts + `]}`)
}

// reqWithToolCall is a request whose assistant message carries one tool call (the given JSON).
func reqWithToolCall(call string) string {
	return reqWithMessages(`{"role":"user","content":"hi"}`, `{"role":"assistant","tool_calls":[`+call+`]}`)
}

func TestDecodeChatRequestDeterministic(t *testing.T) {
	// Several problems at once: the same one must be reported every time (map order must not leak).
	body := `{"zeta":1,"model":"mock-echo","alpha":1,"messages":[{"role":"user"}],"temperature":9,"beta":2}`
	_, first := DecodeChatRequest([]byte(body), Limits{})
	for range 50 {
		_, err := DecodeChatRequest([]byte(body), Limits{})
		if *err != *first {
			t.Fatalf("got %+v then %+v", first, err)
		}
	}
	if first.Param != "alpha" {
		t.Errorf("first problem in sorted order is alpha, got %q", first.Param)
	}
}

func TestParseInteger(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int64
		want intStatus
	}{
		{"0", 0, intOK}, {"-0", 0, intOK}, {"0.0e5", 0, intOK}, {"12", 12, intOK}, {"1.0", 1, intOK},
		{"1.50e1", 15, intOK}, {"120e-1", 12, intOK}, {"1E2", 100, intOK}, {"-2.000", -2, intOK},
		{"9223372036854775807", 9223372036854775807, intOK},
		{"-9223372036854775808", -9223372036854775808, intOK},
		{"9.223372036854775807e18", 9223372036854775807, intOK},
		{"9223372036854775808", 0, intTooLarge}, {"-9223372036854775809", 0, intTooSmall},
		{"1e19", 0, intTooLarge}, {"-1e400", 0, intTooSmall}, {"1e99999999999999999999", 0, intTooLarge},
		{"1.5", 0, intNotIntegral}, {"1e-1", 0, intNotIntegral}, {"1.0000000000000000001", 0, intNotIntegral},
		{"5e-99999999999999999999", 0, intNotIntegral}, {"0e-99999999999999999999", 0, intOK},
	} {
		n, st := parseInteger(tc.in)
		if n != tc.n || st != tc.want {
			t.Errorf("parseInteger(%s) = %d, %d; want %d, %d", tc.in, n, st, tc.n, tc.want)
		}
	}
}

// decoderCodes are the only codes DecodeChatRequest may return.
var decoderCodes = []apierr.Code{
	apierr.InvalidJSON, apierr.UnknownParameter, apierr.UnsupportedParameter,
	apierr.MissingRequiredParameter, apierr.InvalidValue,
}

func FuzzDecodeChatRequest(f *testing.F) {
	// More seeds live in testdata/fuzz/FuzzDecodeChatRequest.
	f.Add([]byte(reqWithMessages(`{"role":"user","content":"hi"}`)))
	f.Add([]byte(reqWith(`"stream":true,"stream_options":{"include_usage":true},"n":2,"stop":["a"],"max_tokens":5`)))
	f.Add([]byte(reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"get_weather"}}`)))
	f.Add(deepNestingSeed("chat")) // the worst nesting (TestDecodeCostIsLinearInDepth)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkRunsAgree(t, body)
		lim := Limits{MaxChoices: 128}
		r, err := DecodeChatRequest(body, lim)
		if err != nil {
			if r != nil {
				t.Fatalf("request and error both returned")
			}
			if !slices.Contains(decoderCodes, err.Code) || err.Status < 400 || err.Status > 499 ||
				err.Type != apierr.TypeInvalidRequest || err.Message == "" {
				t.Fatalf("unexpected error %+v", err)
			}
			if (err.Code == apierr.InvalidJSON) != (err.Param == "") {
				t.Fatalf("param %q with code %s", err.Param, err.Code)
			}
			if !utf8.ValidString(err.Message) || !utf8.ValidString(err.Param) {
				t.Fatalf("invalid UTF-8 in error %+v", err)
			}
			if strings.Contains(err.Param, unnamedRoot) {
				t.Fatalf("the unnamed run's error reported: %+v", err)
			}
			_, again := DecodeChatRequest(body, lim)
			if again == nil || *again != *err {
				t.Fatalf("not deterministic: %+v then %+v", err, again)
			}
			return
		}
		if r == nil {
			t.Fatalf("neither request nor error")
		}
		if r.Model == "" || len(r.Messages) == 0 || r.N < 1 || r.N > lim.MaxChoices ||
			r.MaxTokens < 0 || r.MaxTokens > MaxBudget || len(r.Stop) > 4 {
			t.Fatalf("invalid request accepted: %+v", r)
		}
		for _, m := range r.Messages {
			switch m.Role {
			case "system", "developer", "user", "assistant":
			case "tool":
				if m.ToolCallID == "" {
					t.Fatalf("tool message without tool_call_id")
				}
			default:
				t.Fatalf("role %q accepted", m.Role)
			}
		}
		if (r.MaxTokens == 0) != (r.MaxTokensParam == "") {
			t.Fatalf("budget %d from %q", r.MaxTokens, r.MaxTokensParam)
		}
		switch r.ToolChoice.Mode {
		case "", ToolChoiceNone, ToolChoiceAuto:
		case ToolChoiceRequired, ToolChoiceFunction:
			if len(r.Tools) == 0 {
				t.Fatalf("tool_choice %q without tools", r.ToolChoice.Mode)
			}
		default:
			t.Fatalf("tool_choice mode %q", r.ToolChoice.Mode)
		}
		for _, tl := range r.Tools {
			if tl.Parameters != nil && !json.Valid(tl.Parameters) {
				t.Fatalf("invalid parameters kept")
			}
		}
	})
}
