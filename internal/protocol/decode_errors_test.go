package protocol

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"mockgateway/internal/apierr"
)

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
		{"max_tokens past any model's", reqWith(`"max_tokens":2147483648`), apierr.InvalidValue, "max_tokens"},
		{"max_tokens fractional", reqWith(`"max_tokens":1.5`), apierr.InvalidValue, "max_tokens"},
		{"max_tokens string", reqWith(`"max_tokens":"10"`), apierr.InvalidValue, "max_tokens"},
		{"max_tokens huge", reqWith(`"max_tokens":1e30`), apierr.InvalidValue, "max_tokens"},
		{"max_completion_tokens past any model's", reqWith(`"max_completion_tokens":5e9`), apierr.InvalidValue, "max_completion_tokens"},
		{"max_completion_tokens negative", reqWith(`"max_completion_tokens":-1`), apierr.InvalidValue, "max_completion_tokens"},
		{"both budgets, bad max_tokens", reqWith(`"max_completion_tokens":10,"max_tokens":0`), apierr.InvalidValue, "max_tokens"},

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

// TestDecodeChatRequestBudgetMessageNamesCeiling: a budget is refused by the decoder only past
// what any model could take (MaxBudget); below it the model's output limit decides, once the
// model is known (generate.CheckBudget), and --max-tokens only cuts the answer.
func TestDecodeChatRequestBudgetMessageNamesCeiling(t *testing.T) {
	for _, tc := range []struct {
		body string
		lim  Limits
		want string
	}{
		{reqWith(`"max_tokens":2147483648`), Limits{}, "max_tokens must be at most 2147483647"},
		{reqWith(`"max_completion_tokens":1e300`), Limits{}, "max_completion_tokens must be at most 2147483647"},
		{reqWith(`"max_tokens":0`), Limits{}, "max_tokens must be at least 1"},
		{reqWith(`"n":5`), Limits{MaxChoices: 4}, "n must be at most 4"},
	} {
		_, err := DecodeChatRequest([]byte(tc.body), tc.lim)
		if err == nil || err.Code != apierr.InvalidValue || !strings.Contains(err.Message, tc.want) {
			t.Errorf("%s: got %v, want invalid_value naming %q", tc.body, err, tc.want)
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
		reqWith(`"max_tokens":9876540000000`),
		reqWith(`"max_completion_tokens":9876540000000`),
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
