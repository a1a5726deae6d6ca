package jsonenc

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"
)

// slogRef writes v as log/slog's JSON handler writes an attribute's value: the reference of
// AppendSlogString and AppendSlogFloat. The built-in time, level and message are dropped, so the
// line is {"v":<value>}.
type slogRef struct {
	buf bytes.Buffer
	h   slog.Handler
}

func newSlogRef() *slogRef {
	r := &slogRef{}
	r.h = slog.NewJSONHandler(&r.buf, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey, slog.LevelKey, slog.MessageKey:
			return slog.Attr{}
		}
		return a
	}})
	return r
}

func (r *slogRef) value(t testing.TB, v slog.Value) []byte {
	t.Helper()
	r.buf.Reset()
	rec := slog.NewRecord(time.Time{}, slog.LevelInfo, "", 0)
	rec.AddAttrs(slog.Attr{Key: "v", Value: v})
	if err := r.h.Handle(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	line := r.buf.Bytes()
	if !bytes.HasPrefix(line, []byte(`{"v":`)) || !bytes.HasSuffix(line, []byte("}\n")) {
		t.Fatalf("unexpected slog line %q", line)
	}
	return line[len(`{"v":`) : len(line)-len("}\n")]
}

func TestAppendSlogStringMatchesSlog(t *testing.T) {
	ref := newSlogRef()
	for _, s := range append(stringSamples, strings.Repeat("x", 300)) {
		if got, want := AppendSlogString([]byte("prefix"), s), ref.value(t, slog.StringValue(s)); string(got) != "prefix"+string(want) {
			t.Errorf("%q:\n got %s\nwant prefix%s", s, got, want)
		}
	}
}

// TestAppendSlogStringRoundTrips: whatever the string holds, the output is JSON that decodes to
// the string (invalid UTF-8 byte by byte replaced with U+FFFD, as encoding/json does).
func TestAppendSlogStringRoundTrips(t *testing.T) {
	for _, s := range append(stringSamples, strings.Repeat("x", 300)) {
		var got string
		if err := json.Unmarshal(AppendSlogString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var want strings.Builder
		for _, r := range s {
			want.WriteRune(r)
		}
		if got != want.String() {
			t.Errorf("%q round-trips to %q", s, got)
		}
	}
}

// FuzzAppendSlogStringMatchesSlog: whatever the string, AppendSlogString writes what slog's JSON
// handler writes, byte for byte.
func FuzzAppendSlogStringMatchesSlog(f *testing.F) {
	for _, s := range stringSamples {
		f.Add(s)
	}
	ref := newSlogRef()
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendSlogString(nil, s), ref.value(t, slog.StringValue(s)); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

var floatSamples = []float64{0, math.Copysign(0, -1), 1, -1, 0.001, 1.234, 1234.567, 5e-3, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20,
	1e21, 1.2345e22, -3e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 360000000.000001, math.NaN(), math.Inf(1), math.Inf(-1)}

func TestAppendSlogFloatMatchesSlog(t *testing.T) {
	ref := newSlogRef()
	for _, f := range floatSamples {
		if got, want := AppendSlogFloat([]byte("prefix"), f), ref.value(t, slog.Float64Value(f)); string(got) != "prefix"+string(want) {
			t.Errorf("%v:\n got %s\nwant prefix%s", f, got, want)
		}
	}
}

// FuzzAppendSlogFloatMatchesSlog: whatever the float, AppendSlogFloat writes what slog's JSON
// handler writes, byte for byte.
func FuzzAppendSlogFloatMatchesSlog(f *testing.F) {
	for _, v := range floatSamples {
		f.Add(v)
	}
	ref := newSlogRef()
	f.Fuzz(func(t *testing.T, v float64) {
		if got, want := AppendSlogFloat(nil, v), ref.value(t, slog.Float64Value(v)); !bytes.Equal(got, want) {
			t.Fatalf("%v:\n got %s\nwant %s", v, got, want)
		}
	})
}

// BenchmarkAppendSlog compares the slog appenders with slog's JSON handler on an access line's
// values: a request id and a duration in milliseconds. The reference's figure includes the
// handler's own per-record work, which is what the access line's encoder saves.
func BenchmarkAppendSlog(b *testing.B) {
	const id, ms = "req_4bf92f3577b34da6a3ce929d0e0e4736", 1.234
	b.Run("jsonenc", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 128)
		for b.Loop() {
			buf = AppendSlogString(buf[:0], id)
			buf = AppendSlogFloat(buf, ms)
		}
	})
	b.Run("slog", func(b *testing.B) {
		b.ReportAllocs()
		ref := newSlogRef()
		for b.Loop() {
			ref.value(b, slog.StringValue(id))
			ref.value(b, slog.Float64Value(ms))
		}
	})
}
