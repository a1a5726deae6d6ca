package audit

import (
	"slices"
	"strings"
	"testing"
)

// The service as it runs by default, its probe routes untraced (no --trace-probes): its answer
// to the audit's /health request starts no span, so the audit must not wait for one. It ends as
// soon as every span it can expect has arrived, well before --wait, and says so.
func TestAuditDefaultServiceEndsBeforeWait(t *testing.T) {
	rs := startRealService(t, nil)
	rep, code, stderr := runAudit(t, "--target", rs.URL, "--logs", rs.logPath, "--wait", "60s")
	if code != ExitClean {
		dump(t, rep)
		t.Fatalf("exit %d, problems %v\n%s", code, rep.Problems, stderr)
	}
	t.Logf("waited %dms of --wait %dms", rep.Wait.WaitedMS, rep.Wait.LimitMS)
	if len(rep.Wait.TimedOut) != 0 || rep.Wait.WaitedMS >= rep.Wait.LimitMS {
		t.Errorf("the audit waited %dms of its %dms; still waiting at the limit: %v", rep.Wait.WaitedMS, rep.Wait.LimitMS, rep.Wait.TimedOut)
	}
	tr := rep.source("traces:embedded")
	if tr == nil || tr.ProbesExpected == 0 || tr.ProbesSeen != tr.ProbesExpected {
		t.Fatalf("traces:embedded: %+v", tr)
	}
	for _, p := range rep.Traffic.Probes {
		if p.Name == "health" && p.SeenIn["logs"] == 0 {
			t.Errorf("the /health request is not in the log, which records probes: %+v", p)
		}
	}
}

// The service traces its probes (--trace-probes): the span of the audit's /health request is
// expected like any other, and shows.
func TestAuditTracedProbesAreExpected(t *testing.T) {
	rs := startRealService(t, nil, "--trace-probes")
	rep, code, stderr := runAudit(t, "--target", rs.URL, "--wait", "60s")
	if code != ExitClean {
		dump(t, rep)
		t.Fatalf("exit %d, problems %v\n%s", code, rep.Problems, stderr)
	}
	tr := rep.source("traces:embedded")
	if tr == nil || tr.ProbesSeen != tr.ProbesExpected {
		t.Fatalf("traces:embedded: %+v", tr)
	}
	for _, n := range tr.Notes {
		if strings.Contains(n, "does not trace its probe routes") {
			t.Errorf("a service that traces its probes: %s", n)
		}
	}
	health := 0
	for _, p := range rep.Traffic.Probes {
		if p.Name == "health" {
			health++
			if p.SeenIn["traces:embedded"] == 0 {
				t.Errorf("the /health request's span is not in the traces: %+v", p)
			}
		}
	}
	if health != 1 {
		t.Errorf("%d health probes, want 1", health)
	}
}

// Untraced probes excuse only the probe routes: a span of any other route that never arrives
// keeps the trace source waiting until --wait, and is reported missing.
func TestAuditWaitsForALostSpan(t *testing.T) {
	for _, c := range []struct {
		name     string
		lost     string
		timedOut bool
	}{
		{"probes untraced, nothing lost", "", false},
		{"probes untraced, one route's span lost", "/v1/embeddings", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeTarget(t, leaks{untracedProbes: true, lostSpanPath: c.lost})
			wait := "2s"
			if !c.timedOut {
				wait = "60s"
			}
			rep, _, _ := runAudit(t, "--target", f.srv.URL, "--metrics-url", "none", "--wait", wait)
			tr := rep.source("traces:embedded")
			if tr == nil {
				t.Fatal("no traces:embedded source")
			}
			if got := slices.Contains(rep.Wait.TimedOut, "traces:embedded"); got != c.timedOut {
				dump(t, rep)
				t.Fatalf("traces:embedded still waiting at --wait: %v, want %v (waited %dms of %dms)", got, c.timedOut, rep.Wait.WaitedMS, rep.Wait.LimitMS)
			}
			if c.timedOut && tr.ProbesSeen >= tr.ProbesExpected {
				t.Errorf("a lost span, yet %d of %d requests show", tr.ProbesSeen, tr.ProbesExpected)
			}
			if !c.timedOut && tr.ProbesSeen != tr.ProbesExpected {
				t.Errorf("%d of %d requests show", tr.ProbesSeen, tr.ProbesExpected)
			}
		})
	}
}
