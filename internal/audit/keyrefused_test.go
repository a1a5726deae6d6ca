package audit

import "testing"

// TestKeyRefused: a target that wants a key refuses it in its dialect's words — 401 for OpenAI
// and Anthropic, Google's 400 API_KEY_INVALID and 403 for a call without a key — and the
// audit's note counts them all; another 400 or 403 is not a key's refusal.
func TestKeyRefused(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   bool
	}{
		{401, `{"error":{"code":"invalid_api_key"}}`, true},
		{400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`, true},
		{403, `{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED","details":[]}}`, true},
		{400, `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[]}}`, false},
		{403, `{"error":{"code":"origin_not_allowed"}}`, false},
		{200, ``, false},
	} {
		if got := keyRefused(&probe{Status: c.status, ErrBody: []byte(c.body)}); got != c.want {
			t.Errorf("%d %s: keyRefused %v, want %v", c.status, c.body, got, c.want)
		}
	}
}
