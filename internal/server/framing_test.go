package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestContentLengthWithTransferEncodingCloses: a request with both Content-Length and
// Transfer-Encoding may be an attempt at request smuggling; RFC 9112 §6.1 says the server must
// close the connection after responding to it. It is answered (Transfer-Encoding wins, as the
// RFC says) with Connection: close, and the server closes the connection.
func TestContentLengthWithTransferEncodingCloses(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	body := chatBody("mock-echo", "")
	for _, head := range []string{
		"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
		"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
		"Transfer-Encoding: chunked\r\n", // no Content-Length left to tell apart: net/http removed it
	} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		chunked := strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
		_, _ = io.WriteString(c, "POST "+chatPath+" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+head+"\r\n"+chunked)
		rd := bufio.NewReader(c)
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatalf("%q: %v", head, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "echo: hello there") || !resp.Close {
			t.Errorf("%q: %d close=%v %s", head, resp.StatusCode, resp.Close, b)
		}
		// A bound on the failure only: a kept connection waits for the next request.
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := rd.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("%q: the connection was not closed: %d %v (deadline: %v)", head, n, err, errors.Is(err, os.ErrDeadlineExceeded))
		}
		c.Close()
	}

	// Content-Length alone keeps the connection for the next request.
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	for i := range 2 {
		_, _ = io.WriteString(c, "POST "+chatPath+" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatalf("keep-alive request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 || resp.Close {
			t.Errorf("keep-alive request %d: %d close=%v", i, resp.StatusCode, resp.Close)
		}
	}
}
