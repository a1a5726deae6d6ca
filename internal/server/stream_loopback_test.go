package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStreamLoopback is a whole stream served over a real loopback connection, telemetry
// on: what a stream costs per frame where ChatStream64's httptest.ResponseRecorder hides it —
// there every write-deadline call fails at once with an allocated error, and nothing is written
// to a socket. One client reads each stream to its end on a keep-alive connection; cpu-ns/op is
// the process's, the client's reading included (the same before and after a server change), and
// user-ns/op its share outside the kernel, where the writes' system calls do not blur it.
//
// chat-paced waits a real (tiny) delay before every token ("between=1us"): the pause's timer path.
func BenchmarkStreamLoopback(b *testing.B) {
	for _, bc := range []struct{ name, path, body, latency string }{
		{"chat", chatPath, chatBody("mock-chat", `"stream":true`), "instant"},
		{"responses", "/v1/responses", responsesBody("mock-chat", `"stream":true`), "instant"},
		{"chat-paced", chatPath, chatBody("mock-chat", `"stream":true`), "ttfc=0s;between=1us"},
	} {
		b.Run(bc.name, func(b *testing.B) { benchLoopback(b, bc.path, bc.body, bc.latency) })
	}
}

func benchLoopback(b *testing.B, path, body, latency string) {
	srv := httptest.NewServer(benchHandler(b, true).handler)
	b.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() }) // before srv.Close, which waits for idle connections
	request := []byte("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
		"X-Mock-Latency: " + latency + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	br := bufio.NewReaderSize(conn, 64<<10)
	var last bytes.Buffer
	one := func() {
		if _, err := conn.Write(request); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		last.Reset()
		_, err = io.Copy(&last, resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.HasSuffix(last.Bytes(), []byte("\n\n")) {
			b.Fatalf("%d %v %q", resp.StatusCode, err, last.Bytes())
		}
	}
	one() // warm: the connection, the server's first allocations
	b.ReportAllocs()
	start, user := cpuTime(), userTime()
	defer func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(userTime()-user)/float64(b.N), "user-ns/op")
	}()
	b.ResetTimer()
	for b.Loop() {
		one()
	}
	b.StopTimer()
	b.SetBytes(int64(last.Len()))
}

// userTime is the process's user CPU time.
func userTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano())
}

// TestStreamEndsInOneWrite: over a real HTTP/1.1 connection, a stream's last token, the frames
// that end it and the response's last chunk ("0\r\n\r\n") reach the socket in one write — the
// handler leaves them to net/http, which writes them as the handler returns — and every other
// write carries one token (the first, the headers too).
func TestStreamEndsInOneWrite(t *testing.T) {
	var writes writeLog
	srv := httptest.NewUnstartedServer(newHarness(t).handler)
	srv.Listener = &loggedListener{Listener: srv.Listener, log: &writes}
	srv.Start()
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+chatPath, strings.NewReader(
		`{"model":"mock-echo","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a b c"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Mock-Latency", "instant")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || !bytes.HasSuffix(body, []byte("data: [DONE]\n\n")) {
		t.Fatalf("%v %q", err, body)
	}
	got := writes.all()
	// headers + role chunk + "echo:"; " a"; " b"; " c" + finish + usage + [DONE] + the last chunk
	if len(got) != 4 {
		t.Fatalf("%d writes, want 4:\n%q", len(got), got)
	}
	if !bytes.HasPrefix(got[0], []byte("HTTP/1.1 200")) || bytes.Count(got[0], []byte("data: ")) != 2 {
		t.Errorf("first write %q: want the headers, the role chunk and the first token", got[0])
	}
	if last := got[3]; !bytes.HasSuffix(last, []byte("data: [DONE]\n\n\r\n0\r\n\r\n")) || bytes.Count(last, []byte("data: ")) != 4 {
		t.Errorf("last write %q: want the last token, finish, usage, [DONE] and the last chunk", last)
	}
}

// writeLog keeps what each Write on the server's connections carried.
type writeLog struct {
	mu     sync.Mutex
	writes [][]byte
}

func (l *writeLog) add(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, bytes.Clone(p))
}

func (l *writeLog) all() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.writes)
}

type loggedListener struct {
	net.Listener
	log *writeLog
}

func (l *loggedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, log: l.log}, nil
}

type loggedConn struct {
	net.Conn
	log *writeLog
}

func (c *loggedConn) Write(p []byte) (int, error) {
	c.log.add(p)
	return c.Conn.Write(p)
}
