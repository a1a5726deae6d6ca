package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

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

	if rep.Wait.LimitMS > 0 || rep.Wait.WaitedMS > 0 {
		fmt.Fprintf(&b, "waited %.1fs of --wait %.1fs for the traffic to show in the sources", float64(rep.Wait.WaitedMS)/1000, float64(rep.Wait.LimitMS)/1000)
		if len(rep.Wait.TimedOut) > 0 {
			fmt.Fprintf(&b, "; still short of it at the limit: %s", strings.Join(rep.Wait.TimedOut, ", "))
		}
		b.WriteString("\n")
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
