package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// soakSample is one row of the table over time.
type soakSample struct {
	At            time.Duration    `json:"-"`
	AtS           float64          `json:"t_seconds"`
	Requests      int64            `json:"requests_total"`
	Interval      int64            `json:"requests_interval"`
	ByStatus      map[string]int64 `json:"by_status_interval"`
	Unexpected    int64            `json:"unexpected_total"`
	RSS           int64            `json:"rss_bytes"`
	Goroutines    float64          `json:"goroutines"`
	StreamsActive float64          `json:"streams_active"`
	Label         string           `json:"label,omitempty"`
}

type soakReport struct {
	Machine    machine      `json:"machine"`
	Command    string       `json:"command"`
	Duration   string       `json:"duration"`
	Rate       float64      `json:"rate"`
	Samples    []soakSample `json:"samples"`
	Unexpected []string     `json:"unexpected_samples,omitempty"`
	Skipped    int64        `json:"skipped"`
	Verdicts   []string     `json:"verdicts"`
	Failed     bool         `json:"failed"`
}

func statusString(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " ")
}

func sampleHeader() string {
	return "| t | requests (interval) | total | by status (interval) | unexpected | RSS (MB) | goroutines | streams active |\n|---:|---:|---:|---|---:|---:|---:|---:|"
}

func sampleRow(s soakSample) string {
	t := fmt.Sprintf("%.0fs", s.AtS)
	if s.Label != "" {
		t += " (" + s.Label + ")"
	}
	return fmt.Sprintf("| %s | %d | %d | %s | %d | %s | %.0f | %.0f |", t, s.Interval, s.Requests, statusString(s.ByStatus), s.Unexpected, mb(s.RSS), s.Goroutines, s.StreamsActive)
}

func writeSoak(w io.Writer, r *soakReport) {
	fmt.Fprintf(w, "\n## mockgateway soak\n\n- Machine: %d cores (nproc), %s; %s\n- Command: `%s` (%s at %.0f req/s, mixed traffic: JSON, streams, tools, client errors, disconnects, every x-mock-fault; full telemetry)\n\n",
		r.Machine.NProc, r.Machine.CPUModel, r.Machine.GoVersion, r.Command, r.Duration, r.Rate)
	fmt.Fprintln(w, sampleHeader())
	for _, s := range r.Samples {
		fmt.Fprintln(w, sampleRow(s))
	}
	fmt.Fprintf(w, "\n'200 cut' counts the stream_cut faults, whose connection is cut as asked.")
	if r.Skipped > 0 {
		fmt.Fprintf(w, " %d ticks were skipped with --max-in-flight requests already in flight.", r.Skipped)
	}
	fmt.Fprintf(w, "\n\nVerdicts:\n\n")
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "- %s\n", v)
	}
	if len(r.Unexpected) > 0 {
		fmt.Fprintf(w, "\nFirst unexpected outcomes:\n\n")
		for _, u := range r.Unexpected {
			fmt.Fprintf(w, "- %s\n", u)
		}
	}
}
