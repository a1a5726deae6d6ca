package journal

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// entry is an entry numbered i, as the server would file for a chat call.
func entry(i int) Entry {
	return Entry{RequestID: "req_" + strconv.Itoa(i), Method: "POST", Route: "/v1/chat/completions",
		Status: 200, Model: "mock-echo", DurationMS: 1, Fixture: "generated"}
}

func ids(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.RequestID
	}
	return out
}

func TestRingOrderAndLimit(t *testing.T) {
	j := New(Config{EntriesPerScope: 5})
	for _, scope := range []string{"", "t-1"} {
		if got := j.List(scope, 0); got != nil {
			t.Errorf("%q: empty journal lists %v", scope, ids(got))
		}
		for i := 1; i <= 3; i++ {
			j.Add(scope, entry(i))
		}
		if got := strings.Join(ids(j.List(scope, 0)), " "); got != "req_3 req_2 req_1" {
			t.Errorf("%q before wrapping: %s", scope, got)
		}
		for i := 4; i <= 12; i++ {
			j.Add(scope, entry(i))
		}
		if got := strings.Join(ids(j.List(scope, 0)), " "); got != "req_12 req_11 req_10 req_9 req_8" {
			t.Errorf("%q after wrapping: %s", scope, got)
		}
		if got := strings.Join(ids(j.List(scope, 2)), " "); got != "req_12 req_11" {
			t.Errorf("%q limit 2: %s", scope, got)
		}
		if got := len(j.List(scope, 100)); got != 5 {
			t.Errorf("%q limit past the ring: %d entries", scope, got)
		}
		for _, e := range j.List(scope, 0) {
			if e.Scope != scope {
				t.Errorf("entry filed under %q says scope %q", scope, e.Scope)
			}
		}
	}
}

func TestDrop(t *testing.T) {
	j := New(Config{})
	j.Add("", entry(1))
	j.Add("a", entry(2))
	j.Add("b", entry(3))
	j.Drop("a")
	j.Drop("never-seen")
	if j.List("a", 0) != nil || len(j.List("b", 0)) != 1 || len(j.List("", 0)) != 1 {
		t.Error("Drop dropped the wrong scope")
	}
	j.Drop("")
	if j.List("", 0) != nil {
		t.Error("the unscoped journal survived Drop")
	}
	j.Add("a", entry(4)) // a dropped scope starts afresh
	if got := ids(j.List("a", 0)); len(got) != 1 || got[0] != "req_4" {
		t.Errorf("after Drop and Add: %v", got)
	}
}

func TestInvalidScopesAreNotStored(t *testing.T) {
	j := New(Config{})
	for _, s := range []string{"a b", "../etc", strings.Repeat("x", 129), "é", "a\nb"} {
		j.Add(s, entry(1))
		if j.List(s, 0) != nil {
			t.Errorf("scope %q stored", s)
		}
		if got := string(j.AppendJSON(nil, s, 0)); got != `{"object":"list","scope":"","data":[]}` {
			t.Errorf("scope %q: %s", s, got)
		}
	}
	if len(j.scopes) != 0 || j.List("", 0) != nil {
		t.Error("an invalid scope's entry went somewhere")
	}
}

func TestLeastRecentlyUsedScopeIsEvicted(t *testing.T) {
	j := New(Config{MaxScopes: 3})
	j.Add("", entry(0))
	j.Add("a", entry(1))
	j.Add("b", entry(2))
	j.Add("c", entry(3))
	j.Add("a", entry(4)) // a is now the most recent: b is the least
	j.List("c", 0)       // reading counts as use: b stays the least
	j.Add("d", entry(5))
	if j.List("b", 0) != nil {
		t.Error("b, the least recently used, was kept")
	}
	for _, s := range []string{"a", "c", "d", ""} {
		if j.List(s, 0) == nil {
			t.Errorf("%q was evicted", s)
		}
	}
	if len(j.scopes) != 3 {
		t.Errorf("%d scopes kept, want 3", len(j.scopes))
	}
	// A List of an unknown scope creates nothing and evicts nothing.
	j.List("zzz", 0)
	if len(j.scopes) != 3 || j.List("a", 0) == nil {
		t.Error("List of an unknown scope changed the index")
	}
	// The unscoped journal is never evicted.
	for i := range 10 {
		j.Add("flood-"+strconv.Itoa(i), entry(i))
	}
	if j.List("", 0) == nil {
		t.Error("a flood of scopes evicted the unscoped journal")
	}
}

// TestScopesAreIsolated adds from many parallel scopes at once: each sees exactly its own.
func TestScopesAreIsolated(t *testing.T) {
	const scopes, perScope = 64, 50
	j := New(Config{EntriesPerScope: perScope, MaxScopes: scopes})
	for s := range scopes {
		t.Run("scope-"+strconv.Itoa(s), func(t *testing.T) {
			t.Parallel()
			scope := "scope-" + strconv.Itoa(s)
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := range perScope / 4 {
						e := entry(w*1000 + i)
						e.RequestID = scope + "/" + e.RequestID
						j.Add(scope, e)
					}
				})
			}
			wg.Wait()
			got := j.List(scope, 0)
			if len(got) != perScope/4*4 {
				t.Fatalf("%d entries, want %d", len(got), perScope/4*4)
			}
			for _, e := range got {
				if e.Scope != scope || !strings.HasPrefix(e.RequestID, scope+"/") {
					t.Fatalf("%s sees %s of %s", scope, e.RequestID, e.Scope)
				}
			}
		})
	}
}

func TestAppendJSON(t *testing.T) {
	j := New(Config{})
	start := time.Date(2026, 11, 22, 17, 53, 21, 995240549, time.UTC)
	e := Entry{RequestID: "demo-1", Time: start, Method: "POST", Route: "/v1/chat/completions", Dialect: "OpenAI Chat Completions", Status: 200,
		Model: "mock-tools", Stream: true, Chunks: 7, StreamOutcome: "completed",
		TimeToFirstChunkMS: Millis(200*time.Millisecond + 1234*time.Nanosecond), DurationMS: Millis(341 * time.Millisecond),
		FinishReason: "tool_calls", PromptTokens: 41, CompletionTokens: 12, Fixture: "weather-call", Fault: "rate_limit",
		Attempt: 3, SDK: SDKOf(http.Header{"X-Stainless-Lang": {"js"}, "X-Stainless-Retry-Count": {"2"}, "User-Agent": {"OpenAI/JS 5.20.0"}}),
		Shape: ShapeOf(decode(t, `{"model":"mock-tools","stream":true,"stream_options":{"include_usage":true},`+
			`"messages":[{"role":"user","content":"Weather in Paris?"}],`+
			`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`))}
	j.Add("checkout-flow", e)
	j.Add("checkout-flow", Entry{RequestID: "demo-2", Time: start.Add(time.Second), Method: "GET", Route: "/v1/models",
		Status: 401, ErrorCode: "invalid_api_key", DurationMS: 0.05})
	got := string(j.AppendJSON([]byte("x"), "checkout-flow", 0))
	const want = `x{"object":"list","scope":"checkout-flow","data":[` +
		`{"request_id":"demo-2","time":"2026-11-22T17:53:22.995Z","scope":"checkout-flow","method":"GET","route":"/v1/models",` +
		`"status":401,"error_code":"invalid_api_key","duration_ms":0.05},` +
		`{"request_id":"demo-1","time":"2026-11-22T17:53:21.995Z","scope":"checkout-flow","method":"POST",` +
		`"route":"/v1/chat/completions","dialect":"OpenAI Chat Completions","status":200,"model":"mock-tools","stream":true,"chunks":7,` +
		`"stream_outcome":"completed","time_to_first_chunk_ms":200.001,"duration_ms":341,"finish_reason":"tool_calls",` +
		`"prompt_tokens":41,"completion_tokens":12,"fixture":"weather-call","fault":"rate_limit","attempt":3,` +
		`"sdk":{"lang":"js","retry_count":"2","user_agent":"OpenAI/JS 5.20.0"},` +
		`"shape":{"fields":["messages","model","stream","stream_options","tools"],"messages":{"user":1},` +
		`"content_chars":{"user":17},"longest_content_chars":17,"tools":1,"tool_schemas":1,"n":1,"stream":true,` +
		`"include_usage":true,"parallel_tool_calls":true}}]}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := string(j.AppendJSON(nil, "nobody", 0)); got != `{"object":"list","scope":"nobody","data":[]}` {
		t.Errorf("empty scope: %s", got)
	}
	if got := string(j.AppendJSON(nil, "checkout-flow", 1)); !strings.Contains(got, "demo-2") || strings.Contains(got, "demo-1") {
		t.Errorf("limit 1: %s", got)
	}

	// encoding/json reads an entry back as it was, but for the time's precision.
	var list struct {
		Object string
		Scope  string
		Data   []Entry
	}
	if err := json.Unmarshal([]byte(want[1:]), &list); err != nil {
		t.Fatal(err)
	}
	e.Scope, e.Time = "checkout-flow", start.Truncate(time.Millisecond)
	if len(list.Data) != 2 || list.Data[1] != e {
		t.Errorf("read back\n%+v\nwant\n%+v", list.Data[1], e)
	}
}

// TestAppendJSONLimitAndQueue: a call a simulated quota refused names the limit it hit beside
// its fault; a call that waited for its model's capacity has its wait. (docs/fixtures.md shows
// these two entries.)
func TestAppendJSONLimitAndQueue(t *testing.T) {
	start := time.Date(2026, 12, 6, 5, 1, 2, 345000000, time.UTC)
	refused := Entry{RequestID: "demo-3", Time: start, Scope: "load-test", Method: "POST", Route: "/v1/messages", Dialect: "Anthropic Messages",
		Status: 429, ErrorCode: "rate_limit_exceeded", Model: "mock-chat", DurationMS: 0.412, Fault: "quota_tokens", Attempt: 1, LimitHit: "tokens"}
	queued := Entry{RequestID: "demo-4", Time: start, Scope: "load-test", Method: "POST", Route: "/v1/chat/completions", Dialect: "OpenAI Chat Completions",
		Status: 200, Model: "mock-busy", DurationMS: 1203.5, FinishReason: "stop", PromptTokens: 9, CompletionTokens: 24, Fixture: "generated",
		Attempt: 1, QueueMS: Millis(850*time.Millisecond + 250*time.Microsecond)}
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{refused, `{"request_id":"demo-3","time":"2026-12-06T05:01:02.345Z","scope":"load-test","method":"POST","route":"/v1/messages",` +
			`"dialect":"Anthropic Messages","status":429,"error_code":"rate_limit_exceeded","model":"mock-chat","duration_ms":0.412,` +
			`"fault":"quota_tokens","attempt":1,"limit_hit":"tokens"}`},
		{queued, `{"request_id":"demo-4","time":"2026-12-06T05:01:02.345Z","scope":"load-test","method":"POST","route":"/v1/chat/completions",` +
			`"dialect":"OpenAI Chat Completions","status":200,"model":"mock-busy","duration_ms":1203.5,"finish_reason":"stop",` +
			`"prompt_tokens":9,"completion_tokens":24,"fixture":"generated","attempt":1,"queue_ms":850.25}`},
	} {
		if got := string(c.e.AppendJSON(nil)); got != c.want {
			t.Errorf("got\n%s\nwant\n%s", got, c.want)
		}
		var back Entry
		if err := json.Unmarshal([]byte(c.want), &back); err != nil || back != c.e {
			t.Errorf("read back %+v (%v), want %+v", back, err, c.e)
		}
	}
}

func TestEntryIsBounded(t *testing.T) {
	j := New(Config{})
	long := strings.Repeat("r", 10000)
	e := Entry{RequestID: long, Route: long, Model: long, Fixture: long, Fault: long, DurationMS: math.NaN(),
		TimeToFirstChunkMS: math.Inf(1), SDK: SDK{UserAgent: long, Lang: long}, Shape: Shape{ToolChoice: long}}
	j.Add("s", e)
	got := j.List("s", 0)[0]
	for name, v := range map[string]string{"request_id": got.RequestID, "route": got.Route, "model": got.Model,
		"fixture": got.Fixture, "fault": got.Fault, "user_agent": got.SDK.UserAgent, "tool_choice": got.Shape.ToolChoice} {
		if len(v) > 128 {
			t.Errorf("%s kept %d bytes", name, len(v))
		}
	}
	if len(got.SDK.Lang) > maxSDKValue {
		t.Errorf("lang kept %d bytes", len(got.SDK.Lang))
	}
	if got.DurationMS != 0 || got.TimeToFirstChunkMS != 0 {
		t.Errorf("non-finite durations kept: %v %v", got.DurationMS, got.TimeToFirstChunkMS)
	}
	if b := j.AppendJSON(nil, "s", 0); !json.Valid(b) {
		t.Errorf("invalid JSON: %s", b)
	}
}

func TestMillis(t *testing.T) {
	for d, want := range map[time.Duration]float64{0: 0, time.Millisecond: 1, 1500 * time.Microsecond: 1.5,
		472123 * time.Nanosecond: 0.472, 472600 * time.Nanosecond: 0.473, 2 * time.Second: 2000} {
		if got := Millis(d); got != want {
			t.Errorf("Millis(%v) = %v, want %v", d, got, want)
		}
	}
}

func ExampleJournal_AppendJSON() {
	j := New(Config{EntriesPerScope: 10, MaxScopes: 100})
	j.Add("t-1", Entry{RequestID: "r1", Time: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), Method: "GET",
		Route: "/v1/models", Status: 200, DurationMS: 0.2})
	fmt.Println(string(j.AppendJSON(nil, "t-1", 20)))
	// Output:
	// {"object":"list","scope":"t-1","data":[{"request_id":"r1","time":"2026-01-02T03:04:05.006Z","scope":"t-1","method":"GET","route":"/v1/models","status":200,"duration_ms":0.2}]}
}

// TestListIsByStart: calls are filed when answered, but listed by when they started, newest
// first: a client's next call can be answered before its previous one is filed.
func TestListIsByStart(t *testing.T) {
	j := New(Config{})
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	j.Add("s", Entry{RequestID: "second", Time: t0.Add(time.Millisecond)})
	j.Add("s", Entry{RequestID: "first", Time: t0})
	got := j.List("s", 0)
	if len(got) != 2 || got[0].RequestID != "second" || got[1].RequestID != "first" {
		t.Errorf("listed %v", got)
	}
}
