package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
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
	request := []byte("POST " + path + " HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n" +
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
