package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestContentLength: every JSON answer carries its exact Content-Length and is not chunked,
// over a real connection, at every size around selfLengthMax and net/http's own buffer — the
// ones whose header net/http writes and the ones writeJSONBytes sets — for GET and HEAD; and so
// does a chat answer through the whole service.
func TestContentLength(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		writeJSONBytes(w, http.StatusOK, bytes.Repeat([]byte("x"), n))
	}))
	defer srv.Close()
	for _, n := range []int{1, 3, 500, selfLengthMax - 1, selfLengthMax, selfLengthMax + 1, 2047, 2048, 2049, 4096, 70_000} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, _ := http.NewRequest(method, srv.URL+"/?n="+strconv.Itoa(n), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantBody := n
			if method == http.MethodHead {
				wantBody = 0
			}
			if resp.Header.Get("Content-Length") != strconv.Itoa(n) || len(resp.TransferEncoding) != 0 || len(body) != wantBody {
				t.Errorf("%s of %d bytes: Content-Length %q, Transfer-Encoding %q, %d bytes of body",
					method, n, resp.Header.Get("Content-Length"), resp.TransferEncoding, len(body))
			}
		}
	}

	h := newHarness(t)
	chat := httptest.NewServer(h.handler)
	defer chat.Close()
	resp, err := http.Post(chat.URL+chatPath, "application/json", bytes.NewReader([]byte(chatBody("mock-chat", ""))))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("chat: %d, Content-Length %q for %d bytes, Transfer-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Length"), len(body), resp.TransferEncoding)
	}
}
