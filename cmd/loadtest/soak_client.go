package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mockgateway/internal/chatclient"
)

// soakStats are the client's counters, read by the sampler.
type soakStats struct {
	total      atomic.Int64
	unexpected atomic.Int64
	skipped    atomic.Int64 // ticks with --max-in-flight requests already in flight
	mu         sync.Mutex
	byStatus   map[string]int64 // "200", "429", …, "conn-cut" (expected), "transport" (unexpected)
	samples    []string         // the first unexpected outcomes
}

func (s *soakStats) status(k string) {
	s.mu.Lock()
	s.byStatus[k]++
	s.mu.Unlock()
}

func (s *soakStats) fail(sc scenario, why string) {
	if s.unexpected.Add(1) <= 20 {
		s.mu.Lock()
		s.samples = append(s.samples, sc.name+": "+why)
		s.mu.Unlock()
	}
}

func (s *soakStats) snapshot() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.byStatus))
	for k, v := range s.byStatus {
		out[k] = v
	}
	return out
}

// do sends one scenario's request and checks how it ended.
func (s *soakStats) do(ctx context.Context, client *http.Client, base string, sc scenario, seq int64) {
	s.total.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	path := sc.path
	if path == "" {
		path = chatclient.ChatPath
	}
	r := chatclient.Request{Method: sc.method, URL: base + path, ContentType: sc.ctype, Header: sc.header}
	if sc.body != "" {
		r.Body = []byte(strings.ReplaceAll(sc.body, "{N}", strconv.FormatInt(seq, 10)))
	}
	resp, err := r.Send(ctx, client)
	if err != nil {
		s.status("transport")
		s.fail(sc, "request: "+err.Error())
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != sc.status {
		s.status(strconv.Itoa(resp.StatusCode))
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		s.fail(sc, fmt.Sprintf("status %d, want %d: %s", resp.StatusCode, sc.status, strings.TrimSpace(string(b))))
		return
	}
	if sc.kind == expDisconnect {
		s.status(strconv.Itoa(resp.StatusCode))
		st, err := chatclient.Read(resp.Body, 3)
		if err == nil && st.Chunks < 3 {
			if err = st.Ended; err == nil {
				err = io.EOF
			}
		}
		if err != nil {
			s.fail(sc, "stream ended before the client went away: "+err.Error())
			return
		}
		cancel() // the client goes away mid-stream
		return
	}
	b, rerr := io.ReadAll(resp.Body)
	switch sc.kind {
	case expStreamCut, expJSONCut:
		if rerr == nil {
			s.status(strconv.Itoa(resp.StatusCode))
			s.fail(sc, "the connection was not cut")
			return
		}
		s.status("200 cut")
		if strings.Contains(string(b), "[DONE]") {
			s.fail(sc, "a cut stream sent [DONE]")
		}
		return
	}
	s.status(strconv.Itoa(resp.StatusCode))
	if rerr != nil {
		s.fail(sc, "reading the body: "+rerr.Error())
		return
	}
	switch sc.kind {
	case expJSON:
		if sc.code != "" {
			if code, _ := chatclient.ErrorCode(b); code != sc.code {
				s.fail(sc, fmt.Sprintf("error code %q, want %q", code, sc.code))
			}
		} else if !json.Valid(b) {
			s.fail(sc, "the body is not JSON")
		}
	case expStream, expStreamError:
		shape, err := shapeOf(b)
		switch {
		case err != nil:
			s.fail(sc, "stream: "+err.Error())
		case !shape.Done:
			s.fail(sc, "the stream did not end with [DONE]")
		case sc.kind == expStream && shape.ErrorFrames > 0:
			s.fail(sc, "unexpected error frame: "+lastError(b))
		case sc.kind == expStreamError && (shape.ErrorFrames != 1 || !strings.Contains(string(b), `"code":"`+sc.code+`"`)):
			s.fail(sc, "no "+sc.code+" error frame")
		}
	}
}

// lastError is the data of a stream's last error frame.
func lastError(b []byte) string {
	st, _ := chatclient.Read(bytes.NewReader(b), 0)
	if n := len(st.ErrorFrames); n > 0 {
		return string(st.ErrorFrames[n-1])
	}
	return ""
}
