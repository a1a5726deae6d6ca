package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"mockgateway/internal/promtext"
)

// ---- responses: the headers of every response, the bodies of error responses and of the
// control API's answers (sources_mock.go) ----

type responsesSource struct{ t *traffic }

func (s *responsesSource) name() string                { return "responses" }
func (s *responsesSource) kind() string                { return "responses" }
func (s *responsesSource) location() string            { return s.t.base }
func (s *responsesSource) start(context.Context) error { return nil }
func (s *responsesSource) close()                      {}
func (s *responsesSource) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	c := &collection{probesSeen: map[string]int{}}
	for _, p := range s.t.probes {
		if p.RespHeader == nil && p.ErrBody == nil {
			continue
		}
		c.add("responses", 1)
		c.probesSeen[p.ID]++
		r := record{id: p.ID + " " + p.Name + " (" + strconv.Itoa(p.Status) + ")", key: p.ID, probe: p.ID}
		names := make([]string, 0, len(p.RespHeader))
		for k := range p.RespHeader {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			for _, v := range p.RespHeader[k] {
				r.parts = append(r.parts, part{where: "header " + k, text: k + ": " + v})
				c.add("header_fields", 1)
				c.add("header_bytes", int64(len(k)+len(v)+2))
			}
		}
		if p.ErrBody != nil {
			c.add("error_bodies", 1)
			c.add("error_body_bytes", int64(len(p.ErrBody)))
			r.parts = append(r.parts, bodyParts(p.ErrBody, "body")...)
		}
		if p.okBody != nil && strings.HasPrefix(p.Path, "/_mock/") {
			// The control API's answers echo no client text: unlike a completion, searched.
			c.add("control_bodies", 1)
			r.parts = append(r.parts, bodyParts(p.okBody, "body")...)
		}
		for i, f := range p.SSEErrors {
			c.add("stream_error_frames", 1)
			c.add("error_body_bytes", int64(len(f)))
			r.parts = append(r.parts, bodyParts(f, fmt.Sprintf("stream error frame %d", i+1))...)
		}
		c.records = append(c.records, r)
	}
	for _, rd := range s.t.controlReads(exp) {
		s.t.readControl(ctx, deadline, rd, exp.corr, c)
	}
	c.capturedOK = true
	return c, nil
}

// bodyParts is a JSON body field by field (error.param, error.message, …), or the raw text when
// it is not JSON.
func bodyParts(data []byte, label string) []part {
	if n, err := parseJSON(data); err == nil {
		return flattenParts(n, "")
	}
	return []part{{where: label + " (raw)", text: string(data)}}
}

// ---- logs: a file the service appends to, or standard input ----

type logsSource struct {
	path  string
	stdin io.Reader

	mu    sync.Mutex
	lines [][]byte // from stdin, read as they come
	done  bool     // stdin reached EOF
	err   error

	// A file is read from where the last read stopped, so polling a long log stays cheap.
	fileLines [][]byte
	offset    int64
	partial   []byte // an unfinished last line
}

func (s *logsSource) name() string { return "logs" }
func (s *logsSource) kind() string { return "logs" }
func (s *logsSource) location() string {
	if s.path == "-" {
		return "standard input"
	}
	return s.path
}
func (s *logsSource) close() {}

func (s *logsSource) start(ctx context.Context) error {
	if s.path != "-" {
		f, err := os.Open(s.path)
		if err != nil {
			return fmt.Errorf("cannot open the log file: %w", err)
		}
		f.Close()
		return nil
	}
	// Standard input is read from the start, so that `docker compose logs -f … | mockgateway
	// audit --logs -` works: lines keep arriving while the traffic runs.
	go func() {
		rd := bufio.NewReaderSize(s.stdin, 1<<16)
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 {
				s.mu.Lock()
				s.lines = append(s.lines, bytes.TrimRight(line, "\r\n"))
				s.mu.Unlock()
			}
			if err != nil {
				s.mu.Lock()
				s.done = true
				if !errors.Is(err, io.EOF) {
					s.err = err
				}
				s.mu.Unlock()
				return
			}
		}
	}()
	return nil
}

// read returns the lines so far and how many of them are complete (a file's last line may
// still be being written).
func (s *logsSource) read() ([][]byte, int, error) {
	if s.path == "-" {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Clone(s.lines), len(s.lines), s.err
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the log file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < s.offset {
		s.fileLines, s.offset, s.partial = nil, 0, nil // truncated or rotated: start again
	}
	if _, err := f.Seek(s.offset, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("reading the log file: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the log file: %w", err)
	}
	s.offset += int64(len(data))
	data = append(s.partial, data...)
	end := bytes.LastIndexByte(data, '\n')
	s.partial = append([]byte(nil), data[end+1:]...)
	if end >= 0 {
		for _, l := range bytes.Split(data[:end], []byte("\n")) {
			if l = bytes.TrimRight(l, "\r"); len(l) > 0 {
				s.fileLines = append(s.fileLines, l)
			}
		}
	}
	lines := s.fileLines
	if len(bytes.TrimSpace(s.partial)) > 0 {
		lines = append(lines[:len(lines):len(lines)], s.partial) // searched too, as it is
	}
	return lines, len(s.fileLines), nil
}

func (s *logsSource) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	seen := map[string]int{}
	done := 0 // lines already correlated
	for {
		lines, complete, err := s.read()
		if err != nil {
			return nil, err
		}
		// Polling only looks for the audit's request and trace ids in the raw lines; the lines
		// are decoded field by field once, at the end.
		if done > complete {
			done, seen = 0, map[string]int{} // the file started again
		}
		for _, l := range lines[done:complete] {
			for _, p := range exp.corr.probesIn(string(l)) {
				seen[p]++
			}
		}
		done = complete
		s.mu.Lock()
		eof := s.done
		s.mu.Unlock()
		if len(missing(seen, exp.probes)) == 0 || time.Now().After(deadline) || (s.path == "-" && eof) || !sleepCtx(ctx, 200*time.Millisecond) {
			c := logCollection(lines)
			c.correlate(exp.corr)
			return c, nil
		}
	}
}

func logCollection(lines [][]byte) *collection {
	c := &collection{}
	c.add("lines", 0)
	for i, l := range lines {
		c.add("lines", 1)
		c.add("bytes", int64(len(l)+1))
		r := record{id: fmt.Sprintf("line %d", i+1), key: strconv.Itoa(i)}
		if l[0] == '{' {
			if n, err := parseJSON(l); err == nil {
				c.add("json_lines", 1)
				r.parts = flattenParts(n, "")
				c.records = append(c.records, r)
				continue
			}
		}
		c.add("text_lines", 1)
		r.parts = []part{{where: "line", text: string(l)}}
		c.records = append(c.records, r)
	}
	return c
}

// ---- metrics: the target's /metrics, in OpenMetrics so that exemplars are included ----

const openMetricsAccept = "application/openmetrics-text;version=1.0.0;q=0.9,application/openmetrics-text;version=0.0.1;q=0.8,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// metricsSource polls the request counter in the classic text format, which expfmt parses in
// full, and searches one OpenMetrics scrape, exemplars and all, once the traffic shows.
type metricsSource struct {
	url      string
	client   *http.Client
	baseline float64
	hadBase  bool
}

func (s *metricsSource) name() string     { return "metrics" }
func (s *metricsSource) kind() string     { return "metrics" }
func (s *metricsSource) location() string { return s.url }
func (s *metricsSource) close()           {}

// scrape is the exposition to search, as raw text, and its content type.
func (s *metricsSource) scrape(ctx context.Context) (string, string, error) {
	body, h, err := fetch(ctx, s.client, s.url, openMetricsAccept, 256<<20)
	if err != nil {
		return "", "", err
	}
	text := string(body)
	if !looksLikeExposition(text) {
		return "", "", fmt.Errorf("%s did not answer with the Prometheus or OpenMetrics text format", s.url)
	}
	return text, h.Get("Content-Type"), nil
}

// requestsTotal sums mockgateway_http_requests_total over its series, and says whether it has
// any. A line that does not parse ends the parse; the series before it still count.
func (s *metricsSource) requestsTotal(ctx context.Context) (float64, bool, error) {
	body, _, err := fetch(ctx, s.client, s.url, promtext.Accept, 256<<20)
	if err != nil {
		return 0, false, err
	}
	f, perr := promtext.Parse(bytes.NewReader(body))
	if perr != nil && len(f) == 0 {
		return 0, false, fmt.Errorf("%s did not answer with the Prometheus text format: %v", s.url, perr)
	}
	total, ok := f.Sum("mockgateway_http_requests_total")
	return total, ok, nil
}

func (s *metricsSource) start(ctx context.Context) error {
	// No series yet (a service that has served nothing) is a baseline of 0.
	var err error
	s.baseline, _, err = s.requestsTotal(ctx)
	s.hadBase = err == nil
	return err
}

func (s *metricsSource) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	last, since := -1.0, time.Now()
	var total float64
	var ok bool
	for {
		var err error
		if total, ok, err = s.requestsTotal(ctx); err != nil {
			return nil, err
		}
		// Done when the counter has grown by every request sent, or has grown and then held
		// still for a second (a target may not count every route).
		if ok && total != last {
			last, since = total, time.Now()
		}
		delta := total - s.baseline
		if (ok && delta >= float64(exp.reached)) || (ok && delta >= 1 && time.Since(since) >= time.Second) || time.Now().After(deadline) {
			break
		}
		if !sleepCtx(ctx, 250*time.Millisecond) {
			break
		}
	}
	text, ctype, err := s.scrape(ctx)
	if err != nil {
		return nil, err
	}
	c := metricsCollection(text)
	c.correlate(exp.corr)
	if !strings.HasPrefix(ctype, "application/openmetrics-text") {
		c.notes = append(c.notes, "the endpoint did not serve OpenMetrics ("+ctype+"), so exemplars were not included")
	}
	delta := total - s.baseline
	if ok && s.hadBase {
		c.capturedBy = fmt.Sprintf("mockgateway_http_requests_total grew by %.0f during the audit", delta)
		c.capturedOK = delta >= 1
	} else if ok {
		c.capturedBy = "mockgateway_http_requests_total present"
		c.capturedOK = true
	} else {
		c.capturedBy = "no mockgateway_http_requests_total series"
	}
	return c, nil
}

func looksLikeExposition(text string) bool {
	if strings.TrimSpace(text) == "" {
		return false
	}
	for _, l := range strings.SplitN(text, "\n", 50) {
		if strings.HasPrefix(l, "# TYPE ") || strings.HasPrefix(l, "# HELP ") {
			return true
		}
	}
	return false
}

func metricsCollection(text string) *collection {
	c := &collection{}
	c.add("bytes", int64(len(text)))
	c.add("series", 0)
	c.add("exemplars", 0)
	for i, l := range strings.Split(text, "\n") {
		if l == "" {
			continue
		}
		where := "sample"
		switch {
		case strings.HasPrefix(l, "# TYPE "):
			where = "TYPE"
			c.add("metric_families", 1)
		case strings.HasPrefix(l, "#"):
			where = "comment"
		default:
			c.add("series", 1)
			if strings.Contains(l, " # {") {
				c.add("exemplars", 1)
				where = "sample with exemplar"
			}
		}
		c.records = append(c.records, record{id: fmt.Sprintf("line %d", i+1), key: strconv.Itoa(i), parts: []part{{where: where, text: l}}})
	}
	return c
}
