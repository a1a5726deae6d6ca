package audit

import (
	"fmt"
	"regexp"
	"strings"
)

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

// primaryCount names the count that must not be zero for a source to have searched anything.
var primaryCount = map[string]string{
	"responses": "responses", "logs": "lines", "metrics": "series", "traces": "spans", "prometheus": "label_values",
	"store": "keys",
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
			if col.want != nil {
				want = col.want
			}
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
