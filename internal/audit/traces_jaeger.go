package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ---- Jaeger: the query service's HTTP API (v1 /api/traces, v3 /api/v3/traces/{id}) ----

type jaegerTraces struct {
	base    string
	service string
	client  *http.Client
	since   time.Time

	noV3 bool // /api/v3 is not served: per-trace lookups use /api/traces/{id}
}

func (s *jaegerTraces) name() string     { return "traces:jaeger" }
func (s *jaegerTraces) kind() string     { return "traces" }
func (s *jaegerTraces) location() string { return s.base }
func (s *jaegerTraces) close()           {}

func (s *jaegerTraces) start(ctx context.Context) error {
	body, _, err := fetch(ctx, s.client, s.base+"/api/services", "application/json", 16<<20)
	if err != nil {
		return err
	}
	var svc struct {
		Data []string `json:"data"`
	}
	if json.Unmarshal(body, &svc) != nil {
		return fmt.Errorf("%s/api/services did not answer with Jaeger's JSON", s.base)
	}
	s.since = time.Now().Add(-time.Minute)
	return nil
}

// trace fetches one trace; found is false when the backend does not have it (yet).
func (s *jaegerTraces) trace(ctx context.Context, id string) (records []record, n int64, found bool, err error) {
	if !s.noV3 {
		u := s.base + "/api/v3/traces/" + id
		body, _, ferr := fetch(ctx, s.client, u, "application/json", 64<<20)
		doc, perr := parseJSONValues(body)
		var se *statusError
		switch {
		case ferr == nil && perr == nil:
			spans, rest := spanRecordsFromJSON(doc, "v3 trace "+short(id))
			return append(spans, rest), int64(len(body)), len(spans) > 0, nil
		case errors.As(ferr, &se) && perr == nil:
			return nil, 0, false, nil // Jaeger's JSON "trace not found"
		case ferr == nil || errors.As(ferr, &se):
			s.noV3 = true // answered, but not with JSON: an older query service, or the UI's page
		default:
			return nil, 0, false, ferr
		}
	}
	u := s.base + "/api/traces/" + id
	body, _, ferr := fetch(ctx, s.client, u, "application/json", 64<<20)
	doc, perr := parseJSON(body)
	var se *statusError
	switch {
	case ferr == nil && perr == nil:
		spans, rest := spanRecordsFromJSON(doc, "trace "+short(id))
		return append(spans, rest), int64(len(body)), len(spans) > 0, nil
	case errors.As(ferr, &se) && perr == nil:
		return nil, 0, false, nil
	case ferr != nil:
		return nil, 0, false, ferr
	}
	return nil, 0, false, fmt.Errorf("%s did not answer with JSON", u)
}

func (s *jaegerTraces) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	got := map[string][]record{}
	var n int64
	for final := false; ; {
		final = final || time.Now().After(deadline)
		misses := 0
		for _, p := range exp.traced {
			if _, ok := got[p.TraceID]; ok || p.TraceID == "" {
				continue
			}
			recs, size, found, err := s.trace(ctx, p.TraceID)
			if err != nil {
				return nil, err
			}
			if found {
				got[p.TraceID] = recs
				n += size
				misses = 0
				continue
			}
			// Spans arrive in export batches: until they do, a few misses end the round
			// rather than asking for every trace. The last round asks for all of them.
			if misses++; misses >= 3 && !final {
				break
			}
		}
		if len(unfound(got, exp)) == 0 || final {
			break
		}
		if !sleepCtx(ctx, 500*time.Millisecond) {
			break
		}
	}
	var records []record
	for _, recs := range got {
		records = append(records, recs...)
	}
	// The search covers the service's other recent traces too.
	q := url.Values{
		"service": {s.service},
		"start":   {fmt.Sprint(s.since.UnixMicro())},
		"end":     {fmt.Sprint(time.Now().Add(time.Minute).UnixMicro())},
		"limit":   {"1500"},
	}
	u := s.base + "/api/traces?" + q.Encode()
	body, _, err := fetch(ctx, s.client, u, "application/json", 256<<20)
	if err != nil {
		return nil, err
	}
	doc, err := parseJSON(body)
	if err != nil || doc.get("data") == nil {
		return nil, fmt.Errorf("%s did not answer with Jaeger's JSON", u)
	}
	spans, rest := spanRecordsFromJSON(doc, "search")
	records = append(records, spans...)
	records = append(records, rest)
	c := traceCollection(records, n+int64(len(body)))
	c.correlate(exp.corr)
	exp.settle(c)
	if len(spans) == 0 {
		c.notes = append(c.notes, fmt.Sprintf("the search for service %q found no traces since the audit began", s.service))
	}
	return c, nil
}

// unfound returns the probes whose traces the backend can be expected to hold (tracedWant) and
// has not given yet.
func unfound(got map[string][]record, exp *expectation) []*probe {
	seen := map[string]int{}
	probeSpans := false
	for _, p := range exp.traced {
		if recs, ok := got[p.TraceID]; ok && p.TraceID != "" {
			seen[p.ID]++
			for _, r := range recs {
				if _, route, _ := strings.Cut(r.name, " "); probeRoute(route) {
					probeSpans = true
				}
			}
		}
	}
	want, _ := exp.tracedWant(seen, probeSpans)
	var out []*probe
	for _, p := range missing(seen, want) {
		if p.TraceID != "" { // only a trace id can be asked for
			out = append(out, p)
		}
	}
	return out
}
