package promtext

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const exposition = "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 23\n" +
	"go_goroutines_extra 5\nmockgateway_streams_active 10000\n" +
	"# TYPE mockgateway_http_requests_total counter\n" +
	"mockgateway_http_requests_total{route=\"/x\",status=\"200\"} 7\n" +
	"mockgateway_http_requests_total{route=\"/y {}\",status=\"404\"} 2\n"

func TestSum(t *testing.T) {
	f, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Sum("go_goroutines"); !ok || v != 23 {
		t.Errorf("go_goroutines = %v %v", v, ok)
	}
	if v, ok := f.Sum("mockgateway_streams_active"); !ok || v != 10000 {
		t.Errorf("streams_active = %v %v", v, ok)
	}
	if v, ok := f.Sum("mockgateway_http_requests_total"); !ok || v != 9 {
		t.Errorf("labelled, summed = %v %v", v, ok)
	}
	if _, ok := f.Sum("go_threads"); ok {
		t.Error("a missing metric was found")
	}
}

func TestParseKeepsWhatParsedBeforeAnError(t *testing.T) {
	f, err := Parse(strings.NewReader("up 1\nbroken{ 2\n"))
	if err == nil {
		t.Fatal("a malformed line was accepted")
	}
	if v, ok := f.Sum("up"); !ok || v != 1 {
		t.Errorf("up = %v %v, want the line before the error", v, ok)
	}
}

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, exposition)
	}))
	defer srv.Close()
	f, err := Fetch(context.Background(), srv.Client(), srv.URL+"/metrics", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Sum("go_goroutines"); v != 23 {
		t.Errorf("go_goroutines = %v", v)
	}
	if _, err := Fetch(context.Background(), srv.Client(), srv.URL+"/nope", 1<<20); err == nil {
		t.Error("a 404 was accepted")
	}
}
