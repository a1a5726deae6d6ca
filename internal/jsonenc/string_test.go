package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// stdString is what encoding/json writes for s with SetEscapeHTML(false), without the
// Encoder's trailing newline: AppendString's reference.
func stdString(t testing.TB, buf *bytes.Buffer, s string) []byte {
	t.Helper()
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// stringSamples are the cases every string appender is checked on: escapes of each kind, HTML
// characters, multi-byte and invalid UTF-8, the JavaScript line terminators.
var stringSamples = []string{"", "hello world", `quote " and \ backslash`, "tab\tnl\ncr\rbs\bff\f", "\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "café ☕ 😀", "bad \xff\xfe utf8 \xe2\x82", "a\xc3", "line\u2028para\u2029", "\ud7ff\ue000\U0010ffff"}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var ref bytes.Buffer
	for _, s := range stringSamples {
		if got, want := AppendString([]byte("prefix"), s), stdString(t, &ref, s); string(got) != "prefix"+string(want) {
			t.Errorf("%q:\n got %s\nwant prefix%s", s, got, want)
		}
	}
}

// FuzzAppendStringMatchesEncodingJSON: whatever the string, AppendString writes what
// encoding/json writes, byte for byte.
func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range stringSamples {
		f.Add(s)
	}
	var ref bytes.Buffer
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), stdString(t, &ref, s); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

// BenchmarkAppendString compares AppendString with its reference on a streamed chunk's text and
// on a completion's longer text with escapes.
func BenchmarkAppendString(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"token", " hello"},
		{"text", "Sure — here is the answer.\nIt has \"quotes\", a tab\tand some unicode: café ☕.\n"},
	} {
		b.Run(tc.name+"/jsonenc", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 256)
			for b.Loop() {
				buf = AppendString(buf[:0], tc.s)
			}
		})
		b.Run(tc.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			for b.Loop() {
				buf.Reset()
				_ = enc.Encode(tc.s)
			}
		})
	}
}
