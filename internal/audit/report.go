package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
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

// SourceReport is one source: what was searched and what was found.
type SourceReport struct {
	Name           string           `json:"name"`
	Kind           string           `json:"kind"` // responses, logs, metrics, traces, prometheus
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

// traceStateField matches the fields that hold a span's (or a link's) W3C trace state: OTLP's
// trace_state, OTLP JSON's traceState, and the w3c.tracestate tag Jaeger stores it as. Nothing
// else may hold the caller's tracestate, not even an attribute with "tracestate" in its name.
var traceStateField = regexp.MustCompile(`^(links\[\d+\]\.)?(trace_state|traceState)$|^tags\[w3c\.tracestate\]$`)

// allowance says why a found canary is expected there, or "" when it is a leak.
func allowance(k *Canary, srcKind string, r record, where string) string {
	switch k.Kind {
	case kindUnknownField:
		if srcKind == "responses" && r.probe == k.Probe && (where == "error.param" || where == "error.message") {
			return "echoed to its sender, allowed: the contract has an unknown_parameter error name the field in param"
		}
	case kindTraceState:
		if srcKind == "traces" && traceStateField.MatchString(where) {
			return "the caller's W3C tracestate, carried with the span context by contract; allowed only in the span's trace-state field"
		}
	}
	return ""
}

func (rep *Report) finish(a *auditor, outcomes []*outcome, started time.Time) {
	t := a.traffic
	rep.Canaries = CanaryReport{Count: a.can.Count(), Secrets: len(a.can.secrets), Forms: searchedForms}
	rep.Traffic.BodyLimitSeen = t.maxBody
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

// primaryCount names the count that must not be zero for a source to have searched anything.
var primaryCount = map[string]string{
	"responses": "responses", "logs": "lines", "metrics": "series", "traces": "spans", "prometheus": "label_values",
}

func (rep *Report) searchSource(a *auditor, sr *SourceReport, col *collection, byID map[string]*probe) {
	for _, c := range col.counts {
		sr.Searched[c.name] = c.n
		sr.order = append(sr.order, c.name)
	}
	sr.Notes = append(sr.Notes, col.notes...)
	sr.Captured = col.capturedBy
	sr.AuditRecords = col.auditRecords()

	type key struct {
		rec, canary string
		allowed     bool
	}
	seen := map[key]bool{}
	structured := map[string]bool{}
	for pass := 0; pass < 2; pass++ {
		for _, r := range col.records {
			if r.backstop != (pass == 1) {
				continue
			}
			for _, p := range r.parts {
				for _, h := range a.can.Scan(p.text) {
					id := "fragment:" + strings.ToLower(h.Text[h.Start:h.End])
					if h.Canary != nil {
						id = h.Canary.Value
					}
					if pass == 1 && structured[id] {
						continue
					}
					reason := ""
					if h.Canary != nil {
						reason = allowance(h.Canary, sr.Kind, r, p.where)
					}
					k := key{r.key, id, reason != ""}
					if seen[k] {
						continue
					}
					seen[k] = true
					if pass == 0 {
						structured[id] = true
					}
					f := Finding{Source: sr.Name, Record: a.can.Mask(r.id), Field: a.can.Mask(p.where), Encoding: h.Encoding,
						Excerpt: a.can.Excerpt(h), Reason: reason}
					if h.Canary != nil {
						f.Canary, f.Place, f.Probe = h.Canary.ID, h.Canary.Place, h.Canary.Probe
						if p := byID[h.Canary.Probe]; p != nil {
							f.ProbeName = p.Name
						}
					} else {
						f.Canary, f.Place = "fragment", "a piece of a canary, cut too short to tell which"
					}
					if reason != "" {
						sr.Allowed++
						if sr.Allowed <= maxFindingsPerSource {
							rep.Allowed = append(rep.Allowed, f)
						}
					} else {
						sr.Leaks++
						if sr.Leaks <= maxFindingsPerSource {
							rep.Leaks = append(rep.Leaks, f)
						}
					}
				}
			}
		}
	}
	if sr.Leaks > maxFindingsPerSource {
		sr.Notes = append(sr.Notes, fmt.Sprintf("%d leaks; the first %d are listed", sr.Leaks, maxFindingsPerSource))
	}

	exp := rep.exp
	switch {
	case sr.Searched[primaryCount[sr.Kind]] == 0:
		sr.Verdict = "empty"
		sr.Reason = fmt.Sprintf("nothing to search (0 %s): an audit that searched nothing proves nothing", primaryCount[sr.Kind])
	case sr.Kind == "metrics" || sr.Kind == "prometheus":
		if !col.capturedOK {
			sr.Verdict, sr.Reason = "not_captured", col.capturedBy
		}
	case sr.Kind == "logs" || sr.Kind == "traces":
		want := exp.probes
		what := "requests"
		if sr.Kind == "traces" {
			want = exp.traced
		}
		sr.ProbesExpected = len(want)
		sr.ProbesSeen = len(want) - len(missing(col.probesSeen, want))
		if sr.ProbesSeen == 0 {
			sr.Verdict = "not_captured"
			sr.Reason = fmt.Sprintf("none of the audit's %d %s shows in it (by request id or trace id): it is not this target's %s, or its records have not arrived (raise --wait)", len(want), what, sr.Kind)
		} else if sr.ProbesSeen*2 < len(want) {
			sr.Verdict = "not_captured"
			sr.Reason = fmt.Sprintf("only %d of the audit's %d %s show in it: too little to vouch for the rest (sampling that ignores the caller's sampled flag, a small buffer, or --wait too short)", sr.ProbesSeen, len(want), what)
		} else if miss := missing(col.probesSeen, want); len(miss) > 0 {
			var ids []string
			for _, p := range miss {
				ids = append(ids, p.ID)
			}
			sr.Notes = append(sr.Notes, fmt.Sprintf("%d of the %d %s do not show in it (%s); the canaries of those were searched for all the same", len(miss), len(want), what, strings.Join(ids, " ")))
		}
	}
	if sr.Kind == "metrics" && sr.Searched["exemplars"] > 0 {
		sr.Searched["audit_exemplars"] = int64(sr.AuditRecords)
		sr.order = append(sr.order, "audit_exemplars")
	}
	if sr.Verdict == "" || sr.Leaks > 0 {
		sr.Verdict = "clean"
		if sr.Leaks > 0 {
			sr.Verdict = "leak"
		}
	}
}

// trafficNotes points out paths that did not run the way the contract says, and a target that
// wants a key the audit was not given.
func (rep *Report) trafficNotes(a *auditor) {
	var unexpected, simIgnored []string
	unauthorized, v1 := 0, 0
	for _, p := range a.traffic.probes {
		if strings.HasPrefix(p.Path, "/v1/") && p.Reached {
			v1++
			if p.Status == http.StatusUnauthorized {
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
		rep.Problems = append(rep.Problems, fmt.Sprintf("the target answered 401 to %d of %d /v1 requests: it requires a local API key (pass --api-key), so the chat paths were not exercised", unauthorized, v1))
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

func (rep *Report) write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	return rep.writeText(w)
}

func (rep *Report) writeText(w io.Writer) error {
	var b strings.Builder
	head := map[string]string{"clean": "CLEAN", "leak": "LEAK FOUND", "incomplete": "INCOMPLETE (not a pass)"}[rep.Verdict]
	fmt.Fprintf(&b, "mockgateway redaction audit: %s (exit %d)\n", head, rep.ExitCode)
	fmt.Fprintf(&b, "target %s, %s, %.1fs\n", rep.Target, rep.StartedAt.Format(time.RFC3339), float64(rep.DurationMS)/1000)
	fmt.Fprintf(&b, "%d canaries in %d requests (%d reached the service)", rep.Canaries.Count, rep.Traffic.Requests, rep.Traffic.Reached)
	if rep.Canaries.Secrets > 0 {
		fmt.Fprintf(&b, ", plus the API key")
	}
	b.WriteString("; searched exact (= JSON/URL-escaped), case-changed, truncated, hex, base64/base64url, percent- and \\u-decoded\n")
	if rep.Traffic.BodyLimitSeen > 0 {
		fmt.Fprintf(&b, "body limit: a %s body got 413\n", sizeText(rep.Traffic.BodyLimitSeen))
	}

	b.WriteString("\nSources\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  SOURCE\tVERDICT\tSEARCHED\tAUDIT TRAFFIC IN IT\n")
	for _, s := range rep.Sources {
		order := s.order
		if len(order) == 0 { // a report read back from JSON
			for k := range s.Searched {
				order = append(order, k)
			}
			sort.Strings(order)
		}
		var parts []string
		for _, k := range order {
			v := s.Searched[k]
			name := strings.ReplaceAll(k, "_", " ")
			if strings.HasSuffix(k, "bytes") {
				parts = append(parts, name+" "+sizeText(v))
				continue
			}
			parts = append(parts, fmt.Sprintf("%d %s", v, name))
		}
		searched := strings.ReplaceAll(strings.Join(parts, ", "), "  ", " ")
		if s.Verdict == "error" {
			searched = "-"
		}
		seen := "-"
		switch {
		case s.ProbesExpected > 0:
			seen = fmt.Sprintf("%d of %d requests (%d records)", s.ProbesSeen, s.ProbesExpected, s.AuditRecords)
		case s.Captured != "":
			seen = s.Captured
		case s.Kind == "responses":
			seen = fmt.Sprintf("%d requests", s.Searched["responses"])
		}
		verdict := strings.ToUpper(s.Verdict)
		if s.Leaks > 0 {
			verdict = fmt.Sprintf("LEAK (%d)", s.Leaks)
		}
		fmt.Fprintf(tw, "  %s %s\t%s\t%s\t%s\n", s.Name, s.Location, verdict, searched, seen)
	}
	tw.Flush()
	for _, s := range rep.Sources {
		if s.Reason != "" && s.Verdict != "clean" && s.Verdict != "leak" {
			fmt.Fprintf(&b, "  %s: %s\n", s.Name, s.Reason)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "  %s: %s\n", s.Name, n)
		}
	}

	if len(rep.Leaks) > 0 {
		fmt.Fprintf(&b, "\nLeaks (%d)\n", len(rep.Leaks))
		for i, f := range rep.Leaks {
			fmt.Fprintf(&b, "  %d. %s %s", i+1, f.Canary, f.Place)
			if f.Probe != "" {
				fmt.Fprintf(&b, " — sent in %s %q", f.Probe, f.ProbeName)
			}
			fmt.Fprintf(&b, "\n     found in %s, %s, field %s (%s)\n     %s\n", f.Source, f.Record, f.Field, f.Encoding, f.Excerpt)
		}
	}
	if len(rep.Allowed) > 0 {
		fmt.Fprintf(&b, "\nFound where the contract allows it (%d)\n", len(rep.Allowed))
		type group struct {
			source, reason string
			n              int
			example        Finding
		}
		var groups []*group
		for _, f := range rep.Allowed {
			var g *group
			for _, x := range groups {
				if x.source == f.Source && x.reason == f.Reason {
					g = x
				}
			}
			if g == nil {
				g = &group{source: f.Source, reason: f.Reason, example: f}
				groups = append(groups, g)
			}
			g.n++
		}
		for _, g := range groups {
			fmt.Fprintf(&b, "  %d in %s: %s\n     e.g. %s %s (%s), field %s: %s\n", g.n, g.source, g.reason, g.example.Canary, g.example.Place, g.example.Probe, g.example.Field, g.example.Excerpt)
		}
	}

	b.WriteString("\nPaths\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  ID\tPATH A CLIENT CAN USE\tSTATUS\tCANARIES\tTIED TO RECORDS IN\tVERDICT\n")
	for _, p := range rep.Traffic.Probes {
		status := "-"
		if p.Status > 0 {
			status = strconv.Itoa(p.Status)
			if p.ErrorCode != "" {
				status += " " + p.ErrorCode
			}
		} else if p.Outcome != "" {
			status = "no response"
		}
		if p.Unexpected {
			status += " (expected " + p.Expected + ")"
		}
		var in []string
		for k, n := range p.SeenIn {
			if k != "responses" {
				in = append(in, fmt.Sprintf("%s:%d", k, n))
			}
		}
		sort.Strings(in)
		shown := strings.Join(in, " ")
		if shown == "" {
			shown = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\n", p.ID, p.Name, status, p.Canaries, shown, strings.ToUpper(p.Verdict))
	}
	tw.Flush()

	if len(rep.Problems) > 0 {
		b.WriteString("\nProblems (the audit is incomplete: exit 2 unless a leak was found)\n")
		for _, p := range rep.Problems {
			fmt.Fprintf(&b, "  - %s\n", p)
		}
	}
	if len(rep.Notes) > 0 {
		b.WriteString("\nNotes\n")
		for _, n := range rep.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	b.WriteString("\nThe user agent carries no canary: the contract records it (cut to 128 characters).\n")
	_, err := io.WriteString(w, b.String())
	return err
}
