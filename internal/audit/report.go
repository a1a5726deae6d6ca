package audit

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// reportSchema names the JSON document's shape; a change that removes or renames a field gets a
// new version.
const reportSchema = "mockgateway.audit/v1"

// maxFindingsPerSource bounds the report; the counts stay exact.
const maxFindingsPerSource = 200

// Report is the audit's result, written as text or as this JSON document.
type Report struct {
	Schema     string         `json:"schema"`
	Verdict    string         `json:"verdict"` // clean | leak | incomplete
	ExitCode   int            `json:"exit_code"`
	Target     string         `json:"target"`
	StartedAt  time.Time      `json:"started_at"`
	DurationMS int64          `json:"duration_ms"`
	Canaries   CanaryReport   `json:"canaries"`
	Traffic    TrafficReport  `json:"traffic"`
	Wait       WaitReport     `json:"wait"`
	Sources    []SourceReport `json:"sources"`
	Leaks      []Finding      `json:"leaks"`
	Allowed    []Finding      `json:"allowed"`
	Problems   []string       `json:"problems"`
	Notes      []string       `json:"notes"`

	exp *expectation
}

// CanaryReport says what was searched for.
type CanaryReport struct {
	Count   int      `json:"count"`
	Secrets int      `json:"secrets"` // known secrets searched too: the --api-key
	Forms   []string `json:"forms"`
}

// TrafficReport is the requests the audit sent.
type TrafficReport struct {
	Requests      int           `json:"requests"`
	Reached       int           `json:"reached"`
	BodyLimitSeen int64         `json:"first_413_at_bytes"` // 0: no 413 up to the largest body sent
	Scope         string        `json:"scope,omitempty"`    // the audit's own fixture scope (x-mock-scope), deleted at the end
	Probes        []ProbeReport `json:"probes"`
}

// ProbeReport is one path a client can use: the request, what came back, and where it showed.
type ProbeReport struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Request    string         `json:"request"` // method and path, canaries shown by id
	Expected   string         `json:"expected,omitempty"`
	Status     int            `json:"status"` // 0: no response
	ErrorCode  string         `json:"error_code,omitempty"`
	Unexpected bool           `json:"unexpected"`
	Outcome    string         `json:"outcome"`
	Canaries   int            `json:"canaries"`
	Places     []string       `json:"places"`
	SeenIn     map[string]int `json:"seen_in"` // source name → records tied to this request
	Leaks      int            `json:"leaks"`
	Verdict    string         `json:"verdict"` // clean | leak
}

// WaitReport is the wait for the traffic to show in the sources. It ends as soon as every source
// holds all of the audit's traffic it can expect, or at --wait; a source still short of it then
// is named in TimedOut.
type WaitReport struct {
	LimitMS  int64    `json:"limit_ms"`  // --wait
	WaitedMS int64    `json:"waited_ms"` // from the end of the traffic until the last source was read
	TimedOut []string `json:"timed_out"` // sources still waiting for some of the traffic at --wait
}

// SourceReport is one source: what was searched and what was found.
type SourceReport struct {
	Name           string           `json:"name"`
	Kind           string           `json:"kind"` // responses, logs, metrics, traces, prometheus, store
	Location       string           `json:"location"`
	Verdict        string           `json:"verdict"` // clean | leak | error | empty | not_captured
	Reason         string           `json:"reason,omitempty"`
	Searched       map[string]int64 `json:"searched"`
	AuditRecords   int              `json:"audit_records"`
	ProbesSeen     int              `json:"probes_seen"`
	ProbesExpected int              `json:"probes_expected"`
	Captured       string           `json:"captured,omitempty"`
	Leaks          int              `json:"leaks"`
	Allowed        int              `json:"allowed"`
	Notes          []string         `json:"notes,omitempty"`

	order []string
}

// Finding is a canary found in a source.
type Finding struct {
	Canary    string `json:"canary"` // c0042, s1 for the API key, "fragment" for a piece of one
	Place     string `json:"place"`
	Probe     string `json:"probe,omitempty"`
	ProbeName string `json:"probe_name,omitempty"`
	Source    string `json:"source"`
	Record    string `json:"record"`
	Field     string `json:"field"`
	Encoding  string `json:"encoding"`
	Excerpt   string `json:"excerpt"` // the canary itself masked as ‹c0042›
	Reason    string `json:"reason,omitempty"`
}

var searchedForms = []string{
	"exact (canaries are [a-z0-9], so this is also their JSON-escaped, URL-encoded and query-escaped form)",
	"case-changed", "truncated (a piece that fits one canary) and fragments",
	"hex", "base64 and base64url at every alignment",
	"inside percent-encoded text", "inside \\u, \\x and &#-escaped text",
}

func (rep *Report) finish(a *auditor, outcomes []*outcome, started time.Time) {
	t := a.traffic
	rep.Canaries = CanaryReport{Count: a.can.Count(), Secrets: len(a.can.secrets), Forms: searchedForms}
	rep.Traffic.BodyLimitSeen = t.maxBody
	rep.Wait.LimitMS = a.cfg.wait.Milliseconds()
	if rep.Wait.TimedOut == nil {
		rep.Wait.TimedOut = []string{}
	}
	rep.Traffic.Scope = t.scope
	probes := map[string]*ProbeReport{}
	for _, p := range t.probes {
		if p.Outcome == "" && !p.Reached {
			continue // never sent (the audit stopped early)
		}
		rep.Traffic.Requests++
		if p.Reached {
			rep.Traffic.Reached++
		}
		pr := ProbeReport{ID: p.ID, Name: p.Name, Request: a.can.Mask(p.Method + " " + p.Path), Expected: p.Expect,
			Status: p.Status, ErrorCode: p.ErrorCode, Outcome: p.Outcome, Canaries: len(p.canaries), SeenIn: map[string]int{}}
		if p.Host != "" {
			pr.Request += " (Host: " + a.can.Mask(p.Host) + ")"
		}
		for _, k := range p.canaries {
			pr.Places = append(pr.Places, k.ID+" "+k.Place)
		}
		pr.Unexpected = p.Expect != "" && !matchesExpect(p, p.Expect)
		rep.Traffic.Probes = append(rep.Traffic.Probes, pr)
	}
	for i := range rep.Traffic.Probes {
		probes[rep.Traffic.Probes[i].ID] = &rep.Traffic.Probes[i]
	}
	byID := map[string]*probe{}
	for _, p := range t.probes {
		byID[p.ID] = p
	}

	for _, o := range outcomes {
		sr := SourceReport{Name: o.src.name(), Kind: o.src.kind(), Location: o.src.location(), Searched: map[string]int64{}}
		switch {
		case o.err != nil:
			sr.Verdict, sr.Reason = "error", a.can.Mask(o.err.Error())
		case o.col == nil:
			sr.Verdict, sr.Reason = "error", "not searched: the audit stopped before the wait"
		default:
			rep.searchSource(a, &sr, o.col, byID)
			for _, p := range o.col.problems {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s (%s): %s", sr.Name, sr.Location, a.can.Mask(p)))
			}
			for id, n := range o.col.probesSeen {
				if pr := probes[id]; pr != nil {
					pr.SeenIn[sr.Name] = n
				}
			}
		}
		if sr.Verdict == "error" || sr.Verdict == "empty" || sr.Verdict == "not_captured" {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s (%s): %s", sr.Name, sr.Location, sr.Reason))
		}
		rep.Sources = append(rep.Sources, sr)
	}
	for _, f := range rep.Leaks {
		if pr := probes[f.Probe]; pr != nil {
			pr.Leaks++
		}
	}
	for i := range rep.Traffic.Probes {
		pr := &rep.Traffic.Probes[i]
		pr.Verdict = "clean"
		if pr.Leaks > 0 {
			pr.Verdict = "leak"
		}
	}
	rep.trafficNotes(a)

	rep.DurationMS = time.Since(started).Milliseconds()
	switch {
	case len(rep.Leaks) > 0:
		rep.Verdict, rep.ExitCode = "leak", ExitLeak
	case len(rep.Problems) > 0:
		rep.Verdict, rep.ExitCode = "incomplete", ExitIncomplete
	default:
		rep.Verdict, rep.ExitCode = "clean", ExitClean
	}
	if rep.Leaks == nil {
		rep.Leaks = []Finding{}
	}
	if rep.Allowed == nil {
		rep.Allowed = []Finding{}
	}
	if rep.Problems == nil {
		rep.Problems = []string{}
	}
	if rep.Notes == nil {
		rep.Notes = []string{}
	}
}

// matchesExpect compares "STATUS[ CODE]" with what came back.
func matchesExpect(p *probe, want string) bool {
	status, code, _ := strings.Cut(want, " ")
	if strconv.Itoa(p.Status) != status {
		return false
	}
	return code == "" || code == p.ErrorCode
}

// keyRefused reports whether the target refused the probe for its key, as its dialect refuses
// one: 401 (OpenAI, Anthropic), or Google's 400 API_KEY_INVALID and 403 for a call without one.
func keyRefused(p *probe) bool {
	switch p.Status {
	case http.StatusUnauthorized:
		return true
	case http.StatusBadRequest:
		return bytes.Contains(p.ErrBody, []byte(`"API_KEY_INVALID"`))
	case http.StatusForbidden:
		return bytes.Contains(p.ErrBody, []byte(`"PERMISSION_DENIED"`)) && bytes.Contains(p.ErrBody, []byte("unregistered callers"))
	}
	return false
}

// trafficNotes points out paths that did not run the way the contract says, and a target that
// wants a key the audit was not given.
func (rep *Report) trafficNotes(a *auditor) {
	var unexpected, simIgnored []string
	unauthorized, v1 := 0, 0
	for _, p := range a.traffic.probes {
		if (strings.HasPrefix(p.Path, "/v1/") || strings.HasPrefix(p.Path, "/v1beta/")) && p.Reached {
			v1++
			if keyRefused(p) {
				unauthorized++
			}
		}
		if p.Expect == "" || !p.Reached || matchesExpect(p, p.Expect) {
			continue
		}
		if p.Header.Get("X-Mock-Fault") != "" && p.Status == http.StatusOK && p.Expect != "200" {
			simIgnored = append(simIgnored, p.ID)
			continue
		}
		unexpected = append(unexpected, fmt.Sprintf("%s %s: expected %s, got %d %s", p.ID, p.Name, p.Expect, p.Status, p.ErrorCode))
	}
	if a.cfg.apiKey == "" && v1 > 0 && unauthorized*2 > v1 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("the target refused the key of %d of %d /v1 requests: it requires a local API key (pass --api-key), so the chat paths were not exercised", unauthorized, v1))
	}
	if len(simIgnored) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the target ignored x-mock-fault on %d requests (%s): simulation headers are off (--allow-simulation-headers=false) or not supported, so those fault paths were exercised as plain requests", len(simIgnored), strings.Join(simIgnored, " ")))
	}
	for _, u := range unexpected {
		rep.Notes = append(rep.Notes, "not as the contract says: "+a.can.Mask(u))
	}
	if a.traffic.maxBody == 0 {
		rep.Notes = append(rep.Notes, "no body up to 8 MiB got a 413: the body limit was not found")
	}
}
