package journal

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSDKHeadersAreCanonical(t *testing.T) {
	want := []string{"x-stainless-lang", "x-stainless-package-version", "x-stainless-os", "x-stainless-runtime",
		"x-stainless-runtime-version", "x-stainless-retry-count", "user-agent"}
	if len(sdkHeaders) != len(want) {
		t.Fatalf("%d headers in the allowlist, want %d", len(sdkHeaders), len(want))
	}
	var s SDK
	for i, sh := range sdkHeaders {
		if sh.name != http.CanonicalHeaderKey(want[i]) {
			t.Errorf("allowlist[%d] = %q, want the canonical %q", i, sh.name, http.CanonicalHeaderKey(want[i]))
		}
		*s.slot(i) = sh.name
	}
	// Each header has its own member, in SDK's order.
	if s != (SDK{"X-Stainless-Lang", "X-Stainless-Package-Version", "X-Stainless-Os", "X-Stainless-Runtime",
		"X-Stainless-Runtime-Version", "X-Stainless-Retry-Count", "User-Agent"}) {
		t.Errorf("slots: %+v", s)
	}
}

func TestSDKOf(t *testing.T) {
	h := http.Header{}
	h.Set("x-stainless-lang", "python")
	h.Set("X-Stainless-Package-Version", "1.109.1")
	h.Set("x-stainless-os", "MacOS")
	h.Set("x-stainless-runtime", "CPython")
	h.Set("x-stainless-runtime-version", "3.12.4")
	h.Set("x-stainless-retry-count", "2")
	h.Set("User-Agent", "OpenAI/Python 1.109.1")
	got := SDKOf(h)
	want := SDK{Lang: "python", PackageVersion: "1.109.1", OS: "MacOS", Runtime: "CPython", RuntimeVersion: "3.12.4",
		RetryCount: "2", UserAgent: "OpenAI/Python 1.109.1"}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { _ = SDKOf(h) }); n != 0 {
		t.Errorf("SDKOf of clean values: %v allocations", n)
	}
	if (SDKOf(http.Header{}) != SDK{}) || (SDKOf(nil) != SDK{}) {
		t.Error("no headers, yet an identity")
	}
}

func TestSDKOfOnlyTheAllowlist(t *testing.T) {
	const secret = "sk-not-in-the-allowlist"
	h := http.Header{}
	for _, name := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "X-Stainless-Arch",
		"X-Stainless-Timeout", "X-Stainless-Async", "X-Test-Case", "X-Mock-Scope", "Openai-Organization",
		"Openai-Project", "X-Forwarded-For", "Referer"} {
		h.Set(name, secret)
	}
	h.Set("User-Agent", "ua")
	b, err := json.Marshal(SDKOf(h))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Errorf("a header outside the allowlist appears: %s", b)
	}
	if string(b) != `{"user_agent":"ua"}` {
		t.Errorf("got %s", b)
	}
}

func TestSDKOfSanitizes(t *testing.T) {
	h := http.Header{}
	h["User-Agent"] = []string{strings.Repeat("é", 300)}
	h["X-Stainless-Lang"] = []string{"py\nthon\x00" + strings.Repeat("x", 100)}
	h["X-Stainless-Os"] = []string{"Linux", "second value ignored"}
	h["X-Stainless-Runtime"] = []string{"\xff\xfe"}
	s := SDKOf(h)
	if n := utf8.RuneCountInString(s.UserAgent); n != maxUserAgent {
		t.Errorf("user agent cut to %d characters, want %d", n, maxUserAgent)
	}
	if utf8.RuneCountInString(s.Lang) != maxSDKValue || !strings.HasPrefix(s.Lang, "py?thon?x") {
		t.Errorf("lang %q: not cut to %d or not cleaned", s.Lang, maxSDKValue)
	}
	if s.OS != "Linux" {
		t.Errorf("os %q: the first value is the one", s.OS)
	}
	if s.Runtime != "??" {
		t.Errorf("runtime %q: invalid UTF-8 kept", s.Runtime)
	}
}
