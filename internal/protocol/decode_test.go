package protocol

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

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

func TestDecodeChatRequestErrors(t *testing.T) {
	long65 := strings.Repeat("a", 65)
	cases := []struct {
		name  string
		body  string
		code  apierr.Code
		param string
	}{
		// Invalid JSON forms.
		{"empty body", ``, apierr.InvalidJSON, ""},
		{"whitespace body", " \n\t ", apierr.InvalidJSON, ""},
		{"array body", `[]`, apierr.InvalidJSON, ""},
		{"array of request", `[` + reqWithMessages(`{"role":"user","content":"hi"}`) + `]`, apierr.InvalidJSON, ""},
		{"string body", `"hello"`, apierr.InvalidJSON, ""},
		{"number body", `42`, apierr.InvalidJSON, ""},
		{"null body", `null`, apierr.InvalidJSON, ""},
		{"trailing garbage", reqWith(`"n":1`) + ` x`, apierr.InvalidJSON, ""},
		{"two objects", `{}{}`, apierr.InvalidJSON, ""},
		{"truncated", `{"model":"mock-echo","messages":[`, apierr.InvalidJSON, ""},
		{"unquoted key", `{model:"mock-echo"}`, apierr.InvalidJSON, ""},
		{"trailing comma", `{"model":"mock-echo",}`, apierr.InvalidJSON, ""},
		{"form body", `model=mock-echo&messages=hi`, apierr.InvalidJSON, ""},

		// Required top-level fields.
		{"empty object", `{}`, apierr.MissingRequiredParameter, "model"},
		{"no messages", `{"model":"mock-echo"}`, apierr.MissingRequiredParameter, "messages"},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, apierr.MissingRequiredParameter, "model"},
		{"null model", `{"model":null,"messages":[{"role":"user","content":"hi"}]}`, apierr.MissingRequiredParameter, "model"},
		{"null messages", `{"model":"mock-echo","messages":null}`, apierr.MissingRequiredParameter, "messages"},
		{"empty model", `{"model":"","messages":[{"role":"user","content":"hi"}]}`, apierr.InvalidValue, "model"},
		{"model number", `{"model":4,"messages":[{"role":"user","content":"hi"}]}`, apierr.InvalidValue, "model"},
		{"empty messages", `{"model":"mock-echo","messages":[]}`, apierr.InvalidValue, "messages"},
		{"messages object", `{"model":"mock-echo","messages":{"role":"user"}}`, apierr.InvalidValue, "messages"},
		{"message not object", reqWithMessages(`"hi"`), apierr.InvalidValue, "messages[0]"},
		{"message null", reqWithMessages(`null`), apierr.InvalidValue, "messages[0]"},

		// Unknown keys at every level.
		{"unknown top", reqWith(`"temprature":1`), apierr.UnknownParameter, "temprature"},
		{"unknown top sorted first", reqWith(`"zzz":1,"aaa":1`), apierr.UnknownParameter, "aaa"},
		{"key case matters", reqWith(`"Temperature":1`), apierr.UnknownParameter, "Temperature"},
		{"unknown message key", reqWithMessages(`{"role":"user","content":"hi","foo":1}`), apierr.UnknownParameter, "messages[0].foo"},
		{"unknown part key", reqWithUserParts(`{"type":"text","text":"hi","foo":1}`), apierr.UnknownParameter, "messages[0].content[0].foo"},
		{"unknown breakpoint key", reqWithUserParts(`{"type":"text","text":"hi","prompt_cache_breakpoint":{"foo":1}}`), apierr.UnknownParameter, "messages[0].content[0].prompt_cache_breakpoint.foo"},
		{"unknown tool_call key", reqWithToolCall(`{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"foo":1}`), apierr.UnknownParameter, "messages[1].tool_calls[0].foo"},
		{"unknown tool_call function key", reqWithToolCall(`{"id":"c","type":"function","function":{"name":"f","arguments":"{}","foo":1}}`), apierr.UnknownParameter, "messages[1].tool_calls[0].function.foo"},
		{"unknown assistant audio key", reqWithMessages(`{"role":"assistant","audio":{"id":"a","foo":1}}`), apierr.UnknownParameter, "messages[0].audio.foo"},
		{"unknown tool key", reqWith(`"tools":[{"type":"function","function":{"name":"f"},"foo":1}]`), apierr.UnknownParameter, "tools[0].foo"},
		{"unknown tool function key", reqWith(`"tools":[{"type":"function","function":{"name":"f","foo":1}}]`), apierr.UnknownParameter, "tools[0].function.foo"},
		{"unknown tool_choice key", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"get_weather"},"foo":1}`), apierr.UnknownParameter, "tool_choice.foo"},
		{"unknown tool_choice function key", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"get_weather","foo":1}}`), apierr.UnknownParameter, "tool_choice.function.foo"},
		{"unknown response_format key", reqWith(`"response_format":{"type":"json_object","foo":1}`), apierr.UnknownParameter, "response_format.foo"},
		{"json_schema under text format", reqWith(`"response_format":{"type":"text","json_schema":{"name":"x"}}`), apierr.UnknownParameter, "response_format.json_schema"},
		{"unknown json_schema key", reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"x","foo":1}}`), apierr.UnknownParameter, "response_format.json_schema.foo"},
		{"unknown stream_options key", reqWith(`"stream":true,"stream_options":{"include_usage":true,"foo":1}`), apierr.UnknownParameter, "stream_options.foo"},
		{"unknown prompt_cache_options key", reqWith(`"prompt_cache_options":{"foo":1}`), apierr.UnknownParameter, "prompt_cache_options.foo"},
		{"name on tool message not a string", reqWithMessages(`{"role":"tool","tool_call_id":"c","content":"x","name":5}`), apierr.InvalidValue, "messages[0].name"},
		{"tool_call_id on user message", reqWithMessages(`{"role":"user","content":"x","tool_call_id":"c"}`), apierr.UnknownParameter, "messages[0].tool_call_id"},
		{"refusal on user message", reqWithMessages(`{"role":"user","content":"x","refusal":"no"}`), apierr.UnknownParameter, "messages[0].refusal"},
		{"tool_calls on user message", reqWithMessages(`{"role":"user","content":"x","tool_calls":[]}`), apierr.UnknownParameter, "messages[0].tool_calls"},
		{"long unknown key cut", reqWith(`"` + strings.Repeat("k", 100) + `":1`), apierr.UnknownParameter, strings.Repeat("k", 64)},
		{"non-printable unknown key", reqWith(`"\u0001bad\u007f":1`), apierr.UnknownParameter, "?bad?"},
		{"empty unknown key", reqWith(`"":1`), apierr.UnknownParameter, `""`},

		// Known to the protocol, unsupported by the mock.
		{"audio", reqWith(`"audio":{"voice":"alloy","format":"wav"}`), apierr.UnsupportedParameter, "audio"},
		{"prediction", reqWith(`"prediction":{"type":"content","content":"x"}`), apierr.UnsupportedParameter, "prediction"},
		{"web_search_options", reqWith(`"web_search_options":{}`), apierr.UnsupportedParameter, "web_search_options"},
		{"functions", reqWith(`"functions":[{"name":"f"}]`), apierr.UnsupportedParameter, "functions"},
		{"function_call", reqWith(`"function_call":"auto"`), apierr.UnsupportedParameter, "function_call"},
		{"moderation", reqWith(`"moderation":{"model":"omni-moderation-latest"}`), apierr.UnsupportedParameter, "moderation"},
		{"logprobs true", reqWith(`"logprobs":true`), apierr.UnsupportedParameter, "logprobs"},
		{"top_logprobs", reqWith(`"top_logprobs":2`), apierr.UnsupportedParameter, "top_logprobs"},
		{"top_logprobs any type", reqWith(`"top_logprobs":"x"`), apierr.UnsupportedParameter, "top_logprobs"},
		{"audio modality", reqWith(`"modalities":["text","audio"]`), apierr.UnsupportedParameter, "modalities"},
		{"function role", reqWithMessages(`{"role":"function","name":"f","content":"x"}`), apierr.UnsupportedParameter, "messages[0].role"},
		{"assistant function_call", reqWithMessages(`{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}`), apierr.UnsupportedParameter, "messages[0].function_call"},
		{"image part", reqWithUserParts(`{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}`), apierr.UnsupportedParameter, "messages[0].content[0].type"},
		{"input_audio part", reqWithUserParts(`{"type":"text","text":"hi"},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}`), apierr.UnsupportedParameter, "messages[0].content[1].type"},
		{"file part", reqWithUserParts(`{"type":"file","file":{"file_id":"file-1"}}`), apierr.UnsupportedParameter, "messages[0].content[0].type"},
		{"discriminator before keys", reqWithUserParts(`{"aaa":1,"type":"image_url"}`), apierr.UnsupportedParameter, "messages[0].content[0].type"},
		{"custom tool", reqWith(`"tools":[{"type":"custom","custom":{"name":"c"}}]`), apierr.UnsupportedParameter, "tools[0].type"},
		{"custom tool call", reqWithToolCall(`{"id":"c","type":"custom","custom":{"name":"c","input":"x"}}`), apierr.UnsupportedParameter, "messages[1].tool_calls[0].type"},
		{"allowed_tools choice", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`), apierr.UnsupportedParameter, "tool_choice.type"},
		{"custom tool choice", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"custom","custom":{"name":"c"}}`), apierr.UnsupportedParameter, "tool_choice.type"},

		// Streaming.
		{"stream string", reqWith(`"stream":"yes"`), apierr.InvalidValue, "stream"},
		{"stream_options without stream", reqWith(`"stream_options":{"include_usage":true}`), apierr.InvalidValue, "stream_options"},
		{"stream_options with stream false", reqWith(`"stream":false,"stream_options":{"include_usage":true}`), apierr.InvalidValue, "stream_options"},
		{"stream_options not object", reqWith(`"stream":true,"stream_options":true`), apierr.InvalidValue, "stream_options"},
		{"include_usage string", reqWith(`"stream":true,"stream_options":{"include_usage":"yes"}`), apierr.InvalidValue, "stream_options.include_usage"},
		{"include_obfuscation number", reqWith(`"stream":true,"stream_options":{"include_obfuscation":1}`), apierr.InvalidValue, "stream_options.include_obfuscation"},

		// Budgets.
		{"max_tokens zero", reqWith(`"max_tokens":0`), apierr.InvalidValue, "max_tokens"},
		{"max_tokens above ceiling", reqWith(`"max_tokens":4097`), apierr.InvalidValue, "max_tokens"},
		{"max_tokens fractional", reqWith(`"max_tokens":1.5`), apierr.InvalidValue, "max_tokens"},
		{"max_tokens string", reqWith(`"max_tokens":"10"`), apierr.InvalidValue, "max_tokens"},
		{"max_tokens huge", reqWith(`"max_tokens":1e30`), apierr.InvalidValue, "max_tokens"},
		{"max_completion_tokens above ceiling", reqWith(`"max_completion_tokens":5000`), apierr.InvalidValue, "max_completion_tokens"},
		{"max_completion_tokens negative", reqWith(`"max_completion_tokens":-1`), apierr.InvalidValue, "max_completion_tokens"},
		{"both budgets, bad max_tokens", reqWith(`"max_completion_tokens":10,"max_tokens":9999`), apierr.InvalidValue, "max_tokens"},

		// n.
		{"n zero", reqWith(`"n":0`), apierr.InvalidValue, "n"},
		{"n above max", reqWith(`"n":129`), apierr.InvalidValue, "n"},
		{"n fractional", reqWith(`"n":2.5`), apierr.InvalidValue, "n"},
		{"n string", reqWith(`"n":"2"`), apierr.InvalidValue, "n"},
		{"n bool", reqWith(`"n":true`), apierr.InvalidValue, "n"},

		// stop.
		{"stop five", reqWith(`"stop":["a","b","c","d","e"]`), apierr.InvalidValue, "stop"},
		{"stop element number", reqWith(`"stop":["a",1]`), apierr.InvalidValue, "stop[1]"},
		{"stop element null", reqWith(`"stop":[null]`), apierr.InvalidValue, "stop[0]"},
		{"stop number", reqWith(`"stop":42`), apierr.InvalidValue, "stop"},
		{"stop object", reqWith(`"stop":{}`), apierr.InvalidValue, "stop"},

		// seed.
		{"seed fractional", reqWith(`"seed":1.5`), apierr.InvalidValue, "seed"},
		{"seed above int64", reqWith(`"seed":9223372036854775808`), apierr.InvalidValue, "seed"},
		{"seed below int64", reqWith(`"seed":-9223372036854775809`), apierr.InvalidValue, "seed"},
		{"seed exponent huge", reqWith(`"seed":1e20`), apierr.InvalidValue, "seed"},
		{"seed string", reqWith(`"seed":"1"`), apierr.InvalidValue, "seed"},

		// Sampling and the fields accepted with no effect.
		{"temperature above", reqWith(`"temperature":2.5`), apierr.InvalidValue, "temperature"},
		{"temperature below", reqWith(`"temperature":-0.1`), apierr.InvalidValue, "temperature"},
		{"temperature string", reqWith(`"temperature":"1"`), apierr.InvalidValue, "temperature"},
		{"temperature overflow", reqWith(`"temperature":1e400`), apierr.InvalidValue, "temperature"},
		{"top_p above", reqWith(`"top_p":1.01`), apierr.InvalidValue, "top_p"},
		{"top_p array", reqWith(`"top_p":[1]`), apierr.InvalidValue, "top_p"},
		{"presence_penalty below", reqWith(`"presence_penalty":-3`), apierr.InvalidValue, "presence_penalty"},
		{"frequency_penalty above", reqWith(`"frequency_penalty":2.01`), apierr.InvalidValue, "frequency_penalty"},
		{"logit_bias above", reqWith(`"logit_bias":{"50256":101}`), apierr.InvalidValue, "logit_bias"},
		{"logit_bias value string", reqWith(`"logit_bias":{"50256":"x"}`), apierr.InvalidValue, "logit_bias"},
		{"logit_bias array", reqWith(`"logit_bias":[]`), apierr.InvalidValue, "logit_bias"},
		{"user number", reqWith(`"user":1`), apierr.InvalidValue, "user"},
		{"safety_identifier too long", reqWith(`"safety_identifier":"` + strings.Repeat("s", 129) + `"`), apierr.InvalidValue, "safety_identifier"},
		{"prompt_cache_key bool", reqWith(`"prompt_cache_key":false`), apierr.InvalidValue, "prompt_cache_key"},
		{"metadata too many", reqWith(`"metadata":{` + metadataPairs(17) + `}`), apierr.InvalidValue, "metadata"},
		{"metadata key too long", reqWith(`"metadata":{"` + long65 + `":"v"}`), apierr.InvalidValue, "metadata"},
		{"metadata value too long", reqWith(`"metadata":{"k":"` + strings.Repeat("v", 513) + `"}`), apierr.InvalidValue, "metadata"},
		{"metadata value number", reqWith(`"metadata":{"k":1}`), apierr.InvalidValue, "metadata"},
		{"metadata array", reqWith(`"metadata":["k"]`), apierr.InvalidValue, "metadata"},
		{"store string", reqWith(`"store":"true"`), apierr.InvalidValue, "store"},
		{"service_tier unknown", reqWith(`"service_tier":"turbo"`), apierr.InvalidValue, "service_tier"},
		{"reasoning_effort unknown", reqWith(`"reasoning_effort":"extreme"`), apierr.InvalidValue, "reasoning_effort"},
		{"verbosity unknown", reqWith(`"verbosity":"loud"`), apierr.InvalidValue, "verbosity"},
		{"prompt_cache_retention unknown", reqWith(`"prompt_cache_retention":"1h"`), apierr.InvalidValue, "prompt_cache_retention"},
		{"prompt_cache_options not object", reqWith(`"prompt_cache_options":"x"`), apierr.InvalidValue, "prompt_cache_options"},
		{"prompt_cache_options mode", reqWith(`"prompt_cache_options":{"mode":"always"}`), apierr.InvalidValue, "prompt_cache_options.mode"},
		{"prompt_cache_options ttl", reqWith(`"prompt_cache_options":{"ttl":"1d"}`), apierr.InvalidValue, "prompt_cache_options.ttl"},
		{"breakpoint ttl", reqWithUserParts(`{"type":"text","text":"hi","prompt_cache_breakpoint":{"mode":"explicit","ttl":"1d"}}`), apierr.InvalidValue, "messages[0].content[0].prompt_cache_breakpoint.ttl"},
		{"logprobs string", reqWith(`"logprobs":"yes"`), apierr.InvalidValue, "logprobs"},
		{"modalities unknown", reqWith(`"modalities":["video"]`), apierr.InvalidValue, "modalities[0]"},
		{"modalities string", reqWith(`"modalities":"text"`), apierr.InvalidValue, "modalities"},
		{"parallel_tool_calls string", reqWith(`"parallel_tool_calls":"no"`), apierr.InvalidValue, "parallel_tool_calls"},

		// Message structure.
		{"role missing", reqWithMessages(`{"content":"hi"}`), apierr.MissingRequiredParameter, "messages[0].role"},
		{"role null", reqWithMessages(`{"role":null,"content":"hi"}`), apierr.MissingRequiredParameter, "messages[0].role"},
		{"role number", reqWithMessages(`{"role":1,"content":"hi"}`), apierr.InvalidValue, "messages[0].role"},
		{"role unknown", reqWithMessages(`{"role":"robot","content":"hi"}`), apierr.InvalidValue, "messages[0].role"},
		{"role checked before keys", reqWithMessages(`{"aaa":1,"role":"robot"}`), apierr.InvalidValue, "messages[0].role"},
		{"user content missing", reqWithMessages(`{"role":"user"}`), apierr.MissingRequiredParameter, "messages[0].content"},
		{"user content null", reqWithMessages(`{"role":"user","content":null}`), apierr.MissingRequiredParameter, "messages[0].content"},
		{"system content missing", reqWithMessages(`{"role":"system"}`), apierr.MissingRequiredParameter, "messages[0].content"},
		{"developer content missing", reqWithMessages(`{"role":"developer","name":"d"}`), apierr.MissingRequiredParameter, "messages[0].content"},
		{"tool content missing", reqWithMessages(`{"role":"tool","tool_call_id":"c"}`), apierr.MissingRequiredParameter, "messages[0].content"},
		{"tool_call_id missing", reqWithMessages(`{"role":"tool","content":"x"}`), apierr.MissingRequiredParameter, "messages[0].tool_call_id"},
		{"tool_call_id empty", reqWithMessages(`{"role":"tool","content":"x","tool_call_id":""}`), apierr.InvalidValue, "messages[0].tool_call_id"},
		{"tool_call_id number", reqWithMessages(`{"role":"tool","content":"x","tool_call_id":7}`), apierr.InvalidValue, "messages[0].tool_call_id"},
		{"content number", reqWithMessages(`{"role":"user","content":42}`), apierr.InvalidValue, "messages[0].content"},
		{"content object", reqWithMessages(`{"role":"user","content":{"type":"text","text":"hi"}}`), apierr.InvalidValue, "messages[0].content"},
		{"part not object", reqWithUserParts(`"hi"`), apierr.InvalidValue, "messages[0].content[0]"},
		{"part type missing", reqWithUserParts(`{"text":"hi"}`), apierr.MissingRequiredParameter, "messages[0].content[0].type"},
		{"part type number", reqWithUserParts(`{"type":1,"text":"hi"}`), apierr.InvalidValue, "messages[0].content[0].type"},
		{"part text missing", reqWithUserParts(`{"type":"text"}`), apierr.MissingRequiredParameter, "messages[0].content[0].text"},
		{"part text number", reqWithUserParts(`{"type":"text","text":5}`), apierr.InvalidValue, "messages[0].content[0].text"},
		{"part type unknown", reqWithUserParts(`{"type":"video","video":{}}`), apierr.InvalidValue, "messages[0].content[0].type"},
		{"refusal part in user", reqWithUserParts(`{"type":"refusal","refusal":"no"}`), apierr.InvalidValue, "messages[0].content[0].type"},
		{"image part in system", reqWithMessages(`{"role":"system","content":[{"type":"image_url","image_url":{"url":"u"}}]}`), apierr.InvalidValue, "messages[0].content[0].type"},
		{"refusal part missing refusal", reqWithMessages(`{"role":"assistant","content":[{"type":"refusal"}]}`), apierr.MissingRequiredParameter, "messages[0].content[0].refusal"},
		{"assistant empty", reqWithMessages(`{"role":"user","content":"hi"}`, `{"role":"assistant"}`), apierr.MissingRequiredParameter, "messages[1].content"},
		{"assistant null content, empty tool_calls", reqWithMessages(`{"role":"assistant","content":null,"tool_calls":[]}`), apierr.MissingRequiredParameter, "messages[0].content"},
		{"assistant name number", reqWithMessages(`{"role":"assistant","content":"x","name":5}`), apierr.InvalidValue, "messages[0].name"},
		{"assistant refusal number", reqWithMessages(`{"role":"assistant","refusal":5}`), apierr.InvalidValue, "messages[0].refusal"},
		{"assistant annotations string", reqWithMessages(`{"role":"assistant","content":"x","annotations":"a"}`), apierr.InvalidValue, "messages[0].annotations"},
		{"assistant audio without id", reqWithMessages(`{"role":"assistant","audio":{}}`), apierr.MissingRequiredParameter, "messages[0].audio.id"},
		{"tool_calls not array", reqWithMessages(`{"role":"assistant","tool_calls":{}}`), apierr.InvalidValue, "messages[0].tool_calls"},
		{"tool call id missing", reqWithToolCall(`{"type":"function","function":{"name":"f","arguments":"{}"}}`), apierr.MissingRequiredParameter, "messages[1].tool_calls[0].id"},
		{"tool call type missing", reqWithToolCall(`{"id":"c","function":{"name":"f","arguments":"{}"}}`), apierr.MissingRequiredParameter, "messages[1].tool_calls[0].type"},
		{"tool call type unknown", reqWithToolCall(`{"id":"c","type":"code","function":{"name":"f","arguments":"{}"}}`), apierr.InvalidValue, "messages[1].tool_calls[0].type"},
		{"tool call function missing", reqWithToolCall(`{"id":"c","type":"function"}`), apierr.MissingRequiredParameter, "messages[1].tool_calls[0].function"},
		{"tool call arguments missing", reqWithToolCall(`{"id":"c","type":"function","function":{"name":"f"}}`), apierr.MissingRequiredParameter, "messages[1].tool_calls[0].function.arguments"},
		{"tool call name missing", reqWithToolCall(`{"id":"c","type":"function","function":{"arguments":"{}"}}`), apierr.MissingRequiredParameter, "messages[1].tool_calls[0].function.name"},
		{"tool call arguments object", reqWithToolCall(`{"id":"c","type":"function","function":{"name":"f","arguments":{}}}`), apierr.InvalidValue, "messages[1].tool_calls[0].function.arguments"},
		{"later message reported", reqWithMessages(`{"role":"user","content":"hi"}`, `{"role":"user"}`), apierr.MissingRequiredParameter, "messages[1].content"},
		{"sorted keys within message", reqWithMessages(`{"role":"user","zz":1,"content":5}`), apierr.InvalidValue, "messages[0].content"},
		{"messages before later top keys", `{"model":"mock-echo","zzz":1,"messages":[{"role":"user"}]}`, apierr.MissingRequiredParameter, "messages[0].content"},
		{"key pass before required", `{"messages":[{"role":"user","content":"hi"}],"zzz":1}`, apierr.UnknownParameter, "zzz"},

		// Tools and tool_choice.
		{"tools object", reqWith(`"tools":{}`), apierr.InvalidValue, "tools"},
		{"tool not object", reqWith(`"tools":["f"]`), apierr.InvalidValue, "tools[0]"},
		{"tool type missing", reqWith(`"tools":[{"function":{"name":"f"}}]`), apierr.MissingRequiredParameter, "tools[0].type"},
		{"tool type unknown", reqWith(`"tools":[{"type":"retrieval"}]`), apierr.InvalidValue, "tools[0].type"},
		{"tool function missing", reqWith(`"tools":[{"type":"function"}]`), apierr.MissingRequiredParameter, "tools[0].function"},
		{"tool name missing", reqWith(`"tools":[{"type":"function","function":{"description":"d"}}]`), apierr.MissingRequiredParameter, "tools[0].function.name"},
		{"tool name with space", reqWith(`"tools":[{"type":"function","function":{"name":"get weather"}}]`), apierr.InvalidValue, "tools[0].function.name"},
		{"tool name too long", reqWith(`"tools":[{"type":"function","function":{"name":"` + long65 + `"}}]`), apierr.InvalidValue, "tools[0].function.name"},
		{"tool name empty", reqWith(`"tools":[` + weatherToolJSON + `,{"type":"function","function":{"name":""}}]`), apierr.InvalidValue, "tools[1].function.name"},
		{"tool parameters array", reqWith(`"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]`), apierr.InvalidValue, "tools[0].function.parameters"},
		{"tool strict string", reqWith(`"tools":[{"type":"function","function":{"name":"f","strict":"yes"}}]`), apierr.InvalidValue, "tools[0].function.strict"},
		{"tool description number", reqWith(`"tools":[{"type":"function","function":{"name":"f","description":1}}]`), apierr.InvalidValue, "tools[0].function.description"},
		{"tool_choice required without tools", reqWith(`"tool_choice":"required"`), apierr.InvalidValue, "tool_choice"},
		{"tool_choice required with empty tools", reqWith(`"tool_choice":"required","tools":[]`), apierr.InvalidValue, "tool_choice"},
		{"tool_choice function without tools", reqWith(`"tool_choice":{"type":"function","function":{"name":"get_weather"}}`), apierr.InvalidValue, "tool_choice"},
		{"tool_choice function not in tools", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"other"}}`), apierr.InvalidValue, "tool_choice.function.name"},
		{"tool_choice unknown string", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":"sometimes"`), apierr.InvalidValue, "tool_choice"},
		{"tool_choice number", reqWith(`"tool_choice":1`), apierr.InvalidValue, "tool_choice"},
		{"tool_choice type missing", reqWith(`"tool_choice":{}`), apierr.MissingRequiredParameter, "tool_choice.type"},
		{"tool_choice type unknown", reqWith(`"tool_choice":{"type":"tool"}`), apierr.InvalidValue, "tool_choice.type"},
		{"tool_choice function missing", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function"}`), apierr.MissingRequiredParameter, "tool_choice.function"},
		{"tool_choice function name missing", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{}}`), apierr.MissingRequiredParameter, "tool_choice.function.name"},

		// response_format.
		{"response_format string", reqWith(`"response_format":"json"`), apierr.InvalidValue, "response_format"},
		{"response_format type missing", reqWith(`"response_format":{}`), apierr.MissingRequiredParameter, "response_format.type"},
		{"response_format type unknown", reqWith(`"response_format":{"type":"xml"}`), apierr.InvalidValue, "response_format.type"},
		{"json_schema missing", reqWith(`"response_format":{"type":"json_schema"}`), apierr.MissingRequiredParameter, "response_format.json_schema"},
		{"json_schema not object", reqWith(`"response_format":{"type":"json_schema","json_schema":"x"}`), apierr.InvalidValue, "response_format.json_schema"},
		{"json_schema name missing", reqWith(`"response_format":{"type":"json_schema","json_schema":{"schema":{}}}`), apierr.MissingRequiredParameter, "response_format.json_schema.name"},
		{"json_schema name bad", reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"a.b"}}`), apierr.InvalidValue, "response_format.json_schema.name"},
		{"json_schema schema string", reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":"{}"}}`), apierr.InvalidValue, "response_format.json_schema.schema"},
		{"json_schema strict string", reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":"true"}}`), apierr.InvalidValue, "response_format.json_schema.strict"},
		{"json_schema description number", reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"x","description":1}}`), apierr.InvalidValue, "response_format.json_schema.description"},
	}
	if len(cases) < 80 {
		t.Fatalf("only %d rows", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate row name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			req, err := DecodeChatRequest([]byte(tc.body), Limits{})
			if err == nil {
				t.Fatalf("decoded without error: %+v", req)
			}
			if req != nil {
				t.Errorf("request returned alongside error")
			}
			if err.Code != tc.code || err.Param != tc.param || err.Status != http.StatusBadRequest ||
				err.Type != apierr.TypeInvalidRequest {
				t.Errorf("got %d %s code=%s param=%q (%s); want 400 code=%s param=%q",
					err.Status, err.Type, err.Code, err.Param, err.Message, tc.code, tc.param)
			}
			if err.Message == "" {
				t.Errorf("empty message")
			}
			checkRunsAgree(t, []byte(tc.body))
		})
	}
}

func metadataPairs(n int) string {
	pairs := make([]string, n)
	for i := range pairs {
		pairs[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return strings.Join(pairs, ",")
}

func TestDecodeChatRequestBudgetMessageNamesCeiling(t *testing.T) {
	for _, tc := range []struct {
		body string
		lim  Limits
		want string
	}{
		{reqWith(`"max_tokens":4097`), Limits{}, "max_tokens must be at most 4096"},
		{reqWith(`"max_completion_tokens":100000`), Limits{}, "max_completion_tokens must be at most 4096"},
		{reqWith(`"max_tokens":300`), Limits{MaxTokensCeiling: 256}, "max_tokens must be at most 256"},
		{reqWith(`"max_tokens":1e300`), Limits{MaxTokensCeiling: 256}, "max_tokens must be at most 256"},
		{reqWith(`"n":5`), Limits{MaxChoices: 4}, "n must be at most 4"},
	} {
		_, err := DecodeChatRequest([]byte(tc.body), tc.lim)
		if err == nil || err.Code != apierr.InvalidValue || !strings.Contains(err.Message, tc.want) {
			t.Errorf("%s: got %v, want invalid_value naming %q", tc.body, err, tc.want)
		}
	}
}

func TestDecodeChatRequestAccepts(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		lim   Limits
		check func(t *testing.T, r *ChatRequest)
	}{
		{name: "minimal", body: reqWithMessages(`{"role":"user","content":"hi"}`), check: func(t *testing.T, r *ChatRequest) {
			want := ChatRequest{Model: "mock-echo", Messages: []Message{{Role: "user", Content: "hi"}}, N: 1, ParallelToolCalls: true}
			if fmt.Sprintf("%+v", *r) != fmt.Sprintf("%+v", want) {
				t.Errorf("got %+v, want %+v", *r, want)
			}
		}},
		{name: "leading and trailing whitespace", body: " \n" + reqWithMessages(`{"role":"user","content":"hi"}`) + "\n\t "},
		{name: "every optional field null", body: reqWith(`"stream":null,"stream_options":null,"max_tokens":null,
			"max_completion_tokens":null,"n":null,"stop":null,"seed":null,"tools":null,"tool_choice":null,
			"parallel_tool_calls":null,"response_format":null,"temperature":null,"top_p":null,
			"presence_penalty":null,"frequency_penalty":null,"logit_bias":null,"user":null,
			"safety_identifier":null,"prompt_cache_key":null,"metadata":null,"store":null,"service_tier":null,
			"reasoning_effort":null,"verbosity":null,"prompt_cache_retention":null,"prompt_cache_options":null,
			"logprobs":null,"top_logprobs":null,"modalities":null,"audio":null,"prediction":null,
			"web_search_options":null,"functions":null,"function_call":null,"moderation":null`),
			check: func(t *testing.T, r *ChatRequest) {
				if r.N != 1 || !r.ParallelToolCalls || r.Stream || r.Seed != nil || r.Temperature != nil ||
					r.Stop != nil || r.Tools != nil || r.ToolChoice.Mode != "" || r.ResponseFormat.Type != "" ||
					r.MaxTokens != 0 || r.MaxTokensParam != "" {
					t.Errorf("defaults not kept: %+v", r)
				}
			}},
		{name: "unknown key with null value", body: reqWith(`"vendor_extension":null,"Temperature":null`)},
		{name: "nested nulls", body: reqWithMessages(
			`{"role":"user","content":[{"type":"text","text":"hi","prompt_cache_breakpoint":null,"extra":null}],"name":null,"foo":null}`,
			`{"role":"assistant","content":null,"refusal":null,"audio":null,"function_call":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}","parsed_arguments":null,"x":null}}],"annotations":null,"parsed":null}`,
			`{"role":"tool","tool_call_id":"c","content":"{}","name":null}`)},
		{name: "stream with options", body: reqWith(`"stream":true,"stream_options":{"include_usage":true,"include_obfuscation":false}`),
			check: func(t *testing.T, r *ChatRequest) {
				if !r.Stream || !r.IncludeUsage {
					t.Errorf("stream %v include_usage %v", r.Stream, r.IncludeUsage)
				}
			}},
		{name: "stream false", body: reqWith(`"stream":false`)},
		{name: "empty stream_options with stream", body: reqWith(`"stream":true,"stream_options":{}`)},
		{name: "max_completion_tokens wins", body: reqWith(`"max_tokens":7,"max_completion_tokens":9`),
			check: wantBudget(9, "max_completion_tokens")},
		{name: "max_tokens alone", body: reqWith(`"max_tokens":7`), check: wantBudget(7, "max_tokens")},
		{name: "budget at ceiling", body: reqWith(`"max_completion_tokens":4096`), check: wantBudget(4096, "max_completion_tokens")},
		{name: "budget integral float", body: reqWith(`"max_tokens":1e2`), check: wantBudget(100, "max_tokens")},
		{name: "budget 2.0", body: reqWith(`"max_tokens":2.0`), check: wantBudget(2, "max_tokens")},
		{name: "custom ceiling", body: reqWith(`"max_tokens":8000`), lim: Limits{MaxTokensCeiling: 8192}, check: wantBudget(8000, "max_tokens")},
		{name: "n 2.0", body: reqWith(`"n":2.0`), check: func(t *testing.T, r *ChatRequest) {
			if r.N != 2 {
				t.Errorf("n = %d", r.N)
			}
		}},
		{name: "n at max", body: reqWith(`"n":128`)},
		{name: "stop string", body: reqWith(`"stop":"END"`), check: wantStop("END")},
		{name: "stop empty string", body: reqWith(`"stop":""`), check: wantStop()},
		{name: "stop array drops empties", body: reqWith(`"stop":["a","","b","c"]`), check: wantStop("a", "b", "c")},
		{name: "stop empty array", body: reqWith(`"stop":[]`), check: wantStop()},
		{name: "seed int64 bounds", body: reqWith(`"seed":-9223372036854775808`), check: wantSeed(-9223372036854775808)},
		{name: "seed max", body: reqWith(`"seed":9223372036854775807`), check: wantSeed(9223372036854775807)},
		{name: "seed exponent", body: reqWith(`"seed":1.5e3`), check: wantSeed(1500)},
		{name: "seed negative zero", body: reqWith(`"seed":-0.0`), check: wantSeed(0)},
		{name: "sampling in range", body: reqWith(`"temperature":0,"top_p":1,"presence_penalty":-2,"frequency_penalty":2,"logit_bias":{"50256":-100,"1":100,"2":0.5}`),
			check: func(t *testing.T, r *ChatRequest) {
				if r.Temperature == nil || *r.Temperature != 0 {
					t.Errorf("temperature %v", r.Temperature)
				}
			}},
		{name: "temperature kept", body: reqWith(`"temperature":1.25`), check: func(t *testing.T, r *ChatRequest) {
			if r.Temperature == nil || *r.Temperature != 1.25 {
				t.Errorf("temperature %v", r.Temperature)
			}
		}},
		{name: "accepted with no effect", body: reqWith(`"user":"u","safety_identifier":"s","prompt_cache_key":"k",
			"metadata":{"a":"b"},"store":true,"service_tier":"flex","reasoning_effort":"xhigh","verbosity":"low",
			"prompt_cache_retention":"24h","prompt_cache_options":{"mode":"explicit","ttl":"30m"},
			"logprobs":false,"modalities":["text"],"parallel_tool_calls":true`)},
		{name: "metadata at limits", body: reqWith(`"metadata":{` + metadataPairs(15) + `,"` + strings.Repeat("k", 64) + `":"` + strings.Repeat("v", 512) + `"}`)},
		{name: "newest enum values", body: reqWith(`"service_tier":"fast","reasoning_effort":"max"`)},
		{name: "prompt_cache_retention in_memory", body: reqWith(`"prompt_cache_retention":"in_memory"`)},
		{name: "prompt_cache_retention in-memory", body: reqWith(`"prompt_cache_retention":"in-memory"`)},
		{name: "parallel_tool_calls false", body: reqWith(`"parallel_tool_calls":false,"tools":[` + weatherToolJSON + `]`),
			check: func(t *testing.T, r *ChatRequest) {
				if r.ParallelToolCalls {
					t.Errorf("parallel_tool_calls false not kept")
				}
			}},
		{name: "text parts joined", body: reqWithMessages(
			`{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
			`{"role":"developer","content":[{"type":"text","text":"c"}],"name":"dev"}`,
			`{"role":"user","content":[{"type":"text","text":"d","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}},{"type":"text","text":"e"}],"name":"ann"}`,
			`{"role":"assistant","content":[{"type":"text","text":"f"},{"type":"refusal","refusal":"g"}]}`,
			`{"role":"user","content":[]}`),
			check: func(t *testing.T, r *ChatRequest) {
				got := []string{}
				for _, m := range r.Messages {
					got = append(got, m.Role+":"+m.Name+":"+m.Content)
				}
				want := []string{"system::ab", "developer:dev:c", "user:ann:de", "assistant::fg", "user::"}
				if !slices.Equal(got, want) {
					t.Errorf("got %q, want %q", got, want)
				}
			}},
		{name: "assistant with only refusal", body: reqWithMessages(`{"role":"user","content":"hi"}`, `{"role":"assistant","refusal":"no"}`)},
		{name: "assistant with only audio", body: reqWithMessages(`{"role":"user","content":"hi"}`, `{"role":"assistant","audio":{"id":"audio_1"}}`)},
		{name: "assistant empty string content", body: reqWithMessages(`{"role":"assistant","content":""}`)},
		{name: "tool round trip", body: `{"model":"mock-tools","messages":[
			{"role":"user","content":"weather?"},
			{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[
				{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
				{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_a","content":"sunny"},
			{"role":"tool","tool_call_id":"call_b","content":[{"type":"text","text":"noon"}]}],
			"tools":[` + weatherToolJSON + `],"tool_choice":"auto"}`,
			check: func(t *testing.T, r *ChatRequest) {
				a := r.Messages[1]
				want := []ToolCall{{"call_a", "get_weather", `{"city":"Paris"}`}, {"call_b", "get_time", "{}"}}
				if !slices.Equal(a.ToolCalls, want) || a.Content != "" {
					t.Errorf("assistant %+v", a)
				}
				if r.Messages[2].ToolCallID != "call_a" || r.Messages[3].Content != "noon" || r.ToolChoice.Mode != ToolChoiceAuto {
					t.Errorf("tool messages %+v / choice %+v", r.Messages[2:], r.ToolChoice)
				}
			}},
		{name: "SDK helper artefacts on sent-back messages", body: reqWithMessages(`{"role":"user","content":"hi"}`,
			`{"role":"assistant","content":null,"refusal":null,"parsed":{"a":1},"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}","parsed_arguments":{"a":1}}}]}`,
			`{"role":"tool","tool_call_id":"c","content":"ok"}`)},
		{name: "tools and parameters compacted", body: reqWith(`"tools":[{"type":"function","function":{"name":"get_weather","description":"d",
			"parameters": { "type" : "object", "properties": {"city": {"type":"string"}}, "required": ["city"] },"strict":true}},
			{"type":"function","function":{"name":"no-params_2"}}]`),
			check: func(t *testing.T, r *ChatRequest) {
				if len(r.Tools) != 2 {
					t.Fatalf("tools %+v", r.Tools)
				}
				t0 := r.Tools[0]
				if t0.Name != "get_weather" || t0.Description != "d" || !t0.Strict ||
					string(t0.Parameters) != `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}` {
					t.Errorf("tool 0 %+v (%s)", t0, t0.Parameters)
				}
				if r.Tools[1].Parameters != nil || r.Tools[1].Strict {
					t.Errorf("tool 1 %+v", r.Tools[1])
				}
			}},
		{name: "empty tools array", body: reqWith(`"tools":[],"tool_choice":"auto"`), check: func(t *testing.T, r *ChatRequest) {
			if r.Tools != nil {
				t.Errorf("tools %+v", r.Tools)
			}
		}},
		{name: "tool_choice none without tools", body: reqWith(`"tool_choice":"none"`), check: wantChoice(ToolChoiceNone, "")},
		{name: "tool_choice auto without tools", body: reqWith(`"tool_choice":"auto"`), check: wantChoice(ToolChoiceAuto, "")},
		{name: "tool_choice required", body: reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":"required"`), check: wantChoice(ToolChoiceRequired, "")},
		{name: "tool_choice named", body: reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"get_weather"}}`),
			check: wantChoice(ToolChoiceFunction, "get_weather")},
		{name: "response_format text", body: reqWith(`"response_format":{"type":"text"}`), check: wantFormat(FormatText, "", "")},
		{name: "response_format json_object", body: reqWith(`"response_format":{"type":"json_object"}`), check: wantFormat(FormatJSONObject, "", "")},
		{name: "response_format json_schema", body: reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"Out-1","description":"d","strict":true,
			"schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}}`),
			check: wantFormat(FormatJSONSchema, "Out-1", `{"type":"object","properties":{"a":{"type":"integer"}}}`)},
		{name: "response_format json_schema without schema", body: reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"x"}}`),
			check: wantFormat(FormatJSONSchema, "x", "")},
		{name: "duplicate key last wins", body: `{"model":"x","model":"mock-echo","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *ChatRequest) {
				if r.Model != "mock-echo" {
					t.Errorf("model %q", r.Model)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeChatRequest([]byte(tc.body), tc.lim)
			if err != nil {
				t.Fatalf("error %s param=%q: %s", err.Code, err.Param, err.Message)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func wantBudget(n int, param string) func(*testing.T, *ChatRequest) {
	return func(t *testing.T, r *ChatRequest) {
		if r.MaxTokens != n || r.MaxTokensParam != param {
			t.Errorf("budget %d from %q, want %d from %q", r.MaxTokens, r.MaxTokensParam, n, param)
		}
	}
}

func wantStop(want ...string) func(*testing.T, *ChatRequest) {
	return func(t *testing.T, r *ChatRequest) {
		if !slices.Equal(r.Stop, want) || (len(want) == 0 && r.Stop != nil) {
			t.Errorf("stop %q, want %q", r.Stop, want)
		}
	}
}

func wantSeed(want int64) func(*testing.T, *ChatRequest) {
	return func(t *testing.T, r *ChatRequest) {
		if r.Seed == nil || *r.Seed != want {
			t.Errorf("seed %v, want %d", r.Seed, want)
		}
	}
}

func wantChoice(mode, fn string) func(*testing.T, *ChatRequest) {
	return func(t *testing.T, r *ChatRequest) {
		if r.ToolChoice != (ToolChoice{Mode: mode, Function: fn}) {
			t.Errorf("tool_choice %+v", r.ToolChoice)
		}
	}
}

func wantFormat(typ, name, schema string) func(*testing.T, *ChatRequest) {
	return func(t *testing.T, r *ChatRequest) {
		f := r.ResponseFormat
		if f.Type != typ || f.Name != name || string(f.Schema) != schema {
			t.Errorf("response_format %+v (%s)", f, f.Schema)
		}
	}
}

// TestDecodeChatRequestNeverEchoesValues sends values that carry canaries in every place a
// decoder might be tempted to quote, and checks no error message or param contains them.
func TestDecodeChatRequestNeverEchoesValues(t *testing.T) {
	const c = "CANARYx9q"
	canaryNums := []string{"987654", "77.123", "31415926", "271828"}
	bodies := []string{
		`{"model":"` + c + `-model","messages":[{"role":"` + c + `-role","content":"` + c + `-content"}]}`,
		`{"model":"` + c + `","messages":[{"role":"user","content":"` + c + `"}],"service_tier":"` + c + `"}`,
		reqWith(`"reasoning_effort":"` + c + `"`),
		reqWith(`"verbosity":"` + c + `"`),
		reqWith(`"prompt_cache_retention":"` + c + `"`),
		reqWith(`"prompt_cache_options":{"mode":"` + c + `"}`),
		reqWith(`"tool_choice":"` + c + `"`),
		reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"` + c + `"}}`),
		reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"` + c + `"}`),
		reqWith(`"tools":[{"type":"function","function":{"name":"` + c + ` bad"}}]`),
		reqWith(`"tools":[{"type":"` + c + `"}]`),
		reqWith(`"response_format":{"type":"` + c + `"}`),
		reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"` + c + `.x"}}`),
		reqWith(`"stop":["` + c + `1","` + c + `2","` + c + `3","` + c + `4","` + c + `5"]`),
		reqWith(`"metadata":{"` + c + strings.Repeat("k", 70) + `":"` + c + `"}`),
		reqWith(`"metadata":{"` + c + `":"` + c + strings.Repeat("v", 600) + `"}`),
		reqWith(`"logit_bias":{"` + c + `":987654}`),
		reqWith(`"modalities":["` + c + `"]`),
		reqWith(`"max_tokens":987654`),
		reqWith(`"max_completion_tokens":987654`),
		reqWith(`"n":31415926`),
		reqWith(`"temperature":77.123`),
		reqWith(`"seed":271828.5`),
		reqWith(`"stream_options":{"include_usage":"` + c + `"}`),
		reqWith(`"safety_identifier":"` + c + strings.Repeat("s", 200) + `"`),
		reqWith(`"user":["` + c + `"]`),
		reqWithMessages(`{"role":"user","content":[{"type":"` + c + `","text":"` + c + `"}]}`),
		reqWithMessages(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://` + c + `.example"}}]}`),
		reqWithMessages(`{"role":"tool","content":"` + c + `"}`),
		reqWithMessages(`{"role":"tool","content":"` + c + `","tool_call_id":""}`),
		reqWithMessages(`{"role":"assistant","content":"` + c + `","tool_calls":[{"id":"` + c + `","type":"` + c + `"}]}`),
		reqWithMessages(`{"role":"assistant","tool_calls":[{"id":"` + c + `","type":"function","function":{"name":"` + c + `","arguments":{"x":"` + c + `"}}}]}`),
		reqWithMessages(`{"role":"user","content":"` + c + `","name":{"x":"` + c + `"}}`),
		`{"model":"` + c + `","messages":[{"role":"user","content":"` + c + `"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","stream_options":{}}`,
		`{"model":"` + c + `","messages":"` + c + `"}`,
		`{"model":"` + c + `","messages":[{"role":"user","content":"` + c + `"}]} "` + c + `"`,
	}
	for _, body := range bodies {
		_, err := DecodeChatRequest([]byte(body), Limits{})
		if err == nil {
			t.Errorf("no error for %s", body)
			continue
		}
		for _, s := range append([]string{c}, canaryNums...) {
			if strings.Contains(err.Message, s) || strings.Contains(err.Param, s) {
				t.Errorf("error echoes a value: %s param=%q message=%q", err.Code, err.Param, err.Message)
			}
		}
	}
}

// Requests as real clients send them. Each must decode.
func TestDecodeChatRequestClientBodies(t *testing.T) {
	bodies := map[string]string{
		"curl": `{"model": "mock-echo", "messages": [{"role": "user", "content": "Hello!"}]}`,

		// openai-python: client.chat.completions.create(...) sends only what was given.
		"openai-python create": `{"messages":[{"role":"developer","content":"Talk like a pirate."},{"role":"user","content":"How do I check if a Python object is an instance of a class?"}],"model":"mock-chat"}`,
		"openai-python stream": `{"messages":[{"role":"user","content":"Say this is a test"}],"model":"mock-chat","stream":true,"stream_options":{"include_usage":true}}`,
		// client.chat.completions.parse(response_format=Model): strict json_schema.
		"openai-python parse": `{"messages":[{"role":"system","content":"Extract the event information."},{"role":"user","content":"Alice and Bob are going to a science fair on Friday."}],"model":"mock-chat","response_format":{"type":"json_schema","json_schema":{"schema":{"properties":{"name":{"title":"Name","type":"string"},"date":{"title":"Date","type":"string"},"participants":{"items":{"type":"string"},"title":"Participants","type":"array"}},"required":["name","date","participants"],"title":"CalendarEvent","type":"object","additionalProperties":false},"name":"CalendarEvent","strict":true}}}`,
		// messages.append(completion.choices[0].message): model_dump(exclude_unset=True) of the contract's response.
		"openai-python send back message": `{"messages":[{"role":"user","content":"hi"},{"content":"echo: hi","refusal":null,"role":"assistant","annotations":[]},{"role":"user","content":"again"}],"model":"mock-echo","n":2,"temperature":0.2,"seed":42}`,
		// Appending a parse()/stream-helper message: parsed, tool_calls with index and parsed_arguments.
		"openai-python send back parsed tool call": `{"messages":[{"role":"user","content":"weather in Paris?"},{"content":null,"refusal":null,"role":"assistant","annotations":[],"tool_calls":[{"index":0,"id":"call_abc","function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather","parsed_arguments":{"city":"Paris"}},"type":"function"}],"parsed":null},{"role":"tool","tool_call_id":"call_abc","content":"sunny"}],"model":"mock-tools","tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":true}}]}`,

		// openai-node: runTools() keeps the parsed message (parsed: null, tool_calls with
		// parsed_arguments, refusal: null, annotations: []) and sends it back with stream: false.
		"openai-node runTools":          `{"model":"mock-tools","messages":[{"role":"user","content":"How is the weather this week?"},{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"getWeather","arguments":"{\"location\":\"Paris\"}","parsed_arguments":null}}],"parsed":null},{"role":"tool","tool_call_id":"call_1","content":"{\"temperature\":20}"}],"tool_choice":"auto","tools":[{"type":"function","function":{"name":"getWeather","parameters":{"type":"object","properties":{"location":{"type":"string"}}},"description":"Get the weather"}}],"stream":false}`,
		"openai-node stream":            `{"model":"mock-chat","messages":[{"role":"user","content":"Say this is a test"}],"stream":true}`,
		"openai-node zodResponseFormat": `{"model":"mock-chat","messages":[{"role":"user","content":"solve 8x + 31 = 2"}],"response_format":{"type":"json_schema","json_schema":{"name":"math_response","strict":true,"schema":{"type":"object","properties":{"steps":{"type":"array","items":{"type":"object","properties":{"explanation":{"type":"string"},"output":{"type":"string"}},"required":["explanation","output"],"additionalProperties":false}},"final_answer":{"type":"string"}},"required":["steps","final_answer"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}}}}`,

		// Vercel AI SDK (@ai-sdk/openai, openai.chat(...)): doGenerate and doStream bodies.
		"vercel generate":  `{"model":"mock-chat","max_tokens":100,"temperature":0,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello"}]}`,
		"vercel stream":    `{"model":"mock-chat","messages":[{"role":"user","content":[{"type":"text","text":"Hello"},{"type":"text","text":"World"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		"vercel tools":     `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":20}"}],"tools":[{"type":"function","function":{"name":"weather","description":"Get the weather","parameters":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":false}}],"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true}}`,
		"vercel object":    `{"model":"mock-chat","messages":[{"role":"user","content":"a recipe"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false},"strict":false,"name":"response","description":"A recipe"}},"seed":7,"stop":["\n\n"],"max_completion_tokens":64,"store":false,"metadata":{"app":"demo"},"parallel_tool_calls":false,"user":"u-1"}`,
		"vercel json mode": `{"model":"mock-chat","messages":[{"role":"user","content":"json please"}],"response_format":{"type":"json_object"}}`,

		// LangChain (ChatOpenAI): defaults it has sent across versions, streaming with usage,
		// and a tool round trip (AIMessage with tool calls has content null).
		"langchain-python invoke":            `{"messages":[{"content":"hi","role":"user"}],"model":"mock-chat","stream":false,"n":1,"temperature":0.7}`,
		"langchain-python stream":            `{"messages":[{"content":"hi","role":"user"}],"model":"mock-chat","stream":true,"stream_options":{"include_usage":true}}`,
		"langchain-python tools":             `{"messages":[{"content":"You are helpful","role":"system"},{"content":"what is 3 * 12?","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"type":"function","id":"call_1","function":{"name":"multiply","arguments":"{\"a\": 3, \"b\": 12}"}}]},{"content":"36","role":"tool","tool_call_id":"call_1"}],"model":"mock-tools","stream":false,"parallel_tool_calls":false,"tool_choice":{"type":"function","function":{"name":"multiply"}},"tools":[{"type":"function","function":{"name":"multiply","description":"Multiply a and b.","parameters":{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}}}]}`,
		"langchain-python structured output": `{"messages":[{"content":"Tell me a joke","role":"user"}],"model":"mock-chat","stream":false,"response_format":{"type":"json_schema","json_schema":{"name":"Joke","description":"Joke to tell user.","strict":true,"schema":{"properties":{"setup":{"type":"string"},"punchline":{"type":"string"}},"required":["setup","punchline"],"type":"object","additionalProperties":false}}}}`,
		"langchain-js invoke":                `{"model":"mock-chat","temperature":1,"top_p":1,"frequency_penalty":0,"presence_penalty":0,"n":1,"stream":false,"messages":[{"role":"user","content":"hi","name":"alice"}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeChatRequest([]byte(body), Limits{}); err != nil {
				t.Fatalf("%s param=%q: %s", err.Code, err.Param, err.Message)
			}
		})
	}
}

// TestDecodeChatRequestOpenAIGo marshals requests with the openai-go SDK types exactly as
// client.Chat.Completions.New / NewStreaming would send them, including assistant messages
// rebuilt from the contract's response shapes with Message.ToParam().
func TestDecodeChatRequestOpenAIGo(t *testing.T) {
	// The contract's non-streaming shapes: a text answer and a tool call answer.
	var text, call openai.ChatCompletion
	unmarshalOrFatal(t, `{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"mock-echo",
		"choices":[{"index":0,"message":{"role":"assistant","content":"echo: hi","refusal":null,"annotations":[]},
		"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},
		"system_fingerprint":"fp_mockgateway_4_2","service_tier":"default"}`, &text)
	unmarshalOrFatal(t, `{"id":"chatcmpl-2","object":"chat.completion","created":1767225600,"model":"mock-tools",
		"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":[],
		"tool_calls":[{"id":"call_x","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		"logprobs":null,"finish_reason":"tool_calls"}]}`, &call)

	// A streamed tool call, accumulated the way the SDK's ChatCompletionAccumulator does.
	var acc openai.ChatCompletionAccumulator
	for _, chunk := range []string{
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_y","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	} {
		var c openai.ChatCompletionChunk
		unmarshalOrFatal(t, chunk, &c)
		acc.AddChunk(c)
	}
	if len(acc.Choices) == 0 {
		t.Fatal("accumulator produced no choice")
	}

	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Get the weather"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
		Strict: openai.Bool(true),
	})

	cases := []struct {
		name   string
		params openai.ChatCompletionNewParams
		stream bool
		check  func(*testing.T, *ChatRequest)
	}{
		{name: "minimal", params: openai.ChatCompletionNewParams{
			Model:    "mock-echo",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("hi")},
		}},
		{name: "streaming with usage", stream: true, params: openai.ChatCompletionNewParams{
			Model:         "mock-chat",
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		}, check: func(t *testing.T, r *ChatRequest) {
			if !r.Stream || !r.IncludeUsage {
				t.Errorf("stream %v include_usage %v", r.Stream, r.IncludeUsage)
			}
		}},
		{name: "every supported field", params: openai.ChatCompletionNewParams{
			Model: "mock-tools",
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.DeveloperMessage([]openai.ChatCompletionContentPartTextParam{{Text: "rules"}}),
				openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("a"), openai.TextContentPart("b")}),
			},
			MaxCompletionTokens: openai.Int(64),
			MaxTokens:           openai.Int(32),
			N:                   openai.Int(2),
			Seed:                openai.Int(-7),
			Temperature:         openai.Float(0.5),
			TopP:                openai.Float(0.9),
			PresencePenalty:     openai.Float(0.1),
			FrequencyPenalty:    openai.Float(-0.1),
			LogitBias:           map[string]int64{"50256": -100},
			Logprobs:            openai.Bool(false),
			Stop:                openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END", "STOP"}},
			Tools:               []openai.ChatCompletionToolUnionParam{weather},
			ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{
				OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
					Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"},
				},
			},
			ParallelToolCalls:    openai.Bool(false),
			User:                 openai.String("u"),
			SafetyIdentifier:     openai.String("s"),
			PromptCacheKey:       openai.String("k"),
			Metadata:             shared.Metadata{"k": "v"},
			Store:                openai.Bool(false),
			ServiceTier:          openai.ChatCompletionNewParamsServiceTierFlex,
			ReasoningEffort:      shared.ReasoningEffortLow,
			Verbosity:            openai.ChatCompletionNewParamsVerbosityLow,
			PromptCacheRetention: openai.ChatCompletionNewParamsPromptCacheRetentionInMemory,
			PromptCacheOptions:   openai.ChatCompletionNewParamsPromptCacheOptions{Mode: "explicit", Ttl: "30m"},
			Modalities:           []string{"text"},
		}, check: func(t *testing.T, r *ChatRequest) {
			if r.MaxTokens != 64 || r.MaxTokensParam != "max_completion_tokens" || r.N != 2 || *r.Seed != -7 ||
				*r.Temperature != 0.5 || !slices.Equal(r.Stop, []string{"END", "STOP"}) || r.ParallelToolCalls ||
				r.ToolChoice != (ToolChoice{Mode: ToolChoiceFunction, Function: "get_weather"}) ||
				len(r.Tools) != 1 || !r.Tools[0].Strict || r.Messages[1].Content != "ab" {
				t.Errorf("decoded %+v", r)
			}
		}},
		{name: "structured output", params: openai.ChatCompletionNewParams{
			Model:    "mock-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
				OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "answer",
					Strict: openai.Bool(true),
					Schema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
				}},
			},
		}, check: func(t *testing.T, r *ChatRequest) {
			if r.ResponseFormat.Type != FormatJSONSchema || r.ResponseFormat.Name != "answer" || r.ResponseFormat.Schema == nil {
				t.Errorf("response_format %+v", r.ResponseFormat)
			}
		}},
		{name: "conversation sent back with ToParam", params: openai.ChatCompletionNewParams{
			Model: "mock-tools",
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.UserMessage("hi"),
				text.Choices[0].Message.ToParam(),
				openai.UserMessage("weather?"),
				call.Choices[0].Message.ToParam(),
				openai.ToolMessage("sunny", "call_x"),
				acc.Choices[0].Message.ToParam(),
				openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{{Text: "cloudy"}}, "call_y"),
			},
			Tools: []openai.ChatCompletionToolUnionParam{weather},
		}, check: func(t *testing.T, r *ChatRequest) {
			m := r.Messages
			if m[1].Content != "echo: hi" || len(m[3].ToolCalls) != 1 || m[3].ToolCalls[0].ID != "call_x" ||
				m[3].ToolCalls[0].Arguments != `{"city":"Paris"}` || m[4].ToolCallID != "call_x" ||
				len(m[5].ToolCalls) != 1 || m[5].ToolCalls[0].ID != "call_y" || m[6].Content != "cloudy" {
				t.Errorf("messages %+v", m)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stream { // NewStreaming adds "stream": true to the marshalled params.
				var m map[string]json.RawMessage
				unmarshalOrFatal(t, string(body), &m)
				m["stream"] = json.RawMessage("true")
				body, _ = json.Marshal(m)
			}
			r, apiErr := DecodeChatRequest(body, Limits{})
			if apiErr != nil {
				t.Fatalf("%s param=%q: %s\nbody: %s", apiErr.Code, apiErr.Param, apiErr.Message, body)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func unmarshalOrFatal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
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
	f.Fuzz(func(t *testing.T, body []byte) {
		checkRunsAgree(t, body)
		lim := Limits{MaxTokensCeiling: 4096, MaxChoices: 128}
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
			r.MaxTokens < 0 || r.MaxTokens > lim.MaxTokensCeiling || len(r.Stop) > 4 {
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
