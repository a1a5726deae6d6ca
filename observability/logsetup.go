package observability

import (
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// LogSettings is what OpenLog needs; run fills it from the config.
type LogSettings struct {
	Level, Format string
	// File, when set, is the log's sink, rotated before it passes FileMaxBytes, with
	// FileBackups rotated files kept (rotatingFile). stderr then gets only the lines other than
	// access lines — start-up with the listening address, warnings, errors, shutdown — unless
	// AccessToStderr.
	File           string
	FileMaxBytes   int64
	FileBackups    int
	AccessToStderr bool
	// Access is "all", "errors" or "sample" (with AccessSample: keep 1 success in that many).
	Access       string
	AccessSample int
}

// Log is the service's log: its logger, the writer goroutine beneath it, the file beneath that,
// and the counts of lines left out.
type Log struct {
	Logger  *slog.Logger
	writer  *LogWriter
	file    *rotatingFile
	dropped collectorSet
}

// OpenLog opens the log file (if any) and starts the log's writer; Close flushes and closes
// them.
func OpenLog(s LogSettings, stderr io.Writer) (*Log, error) {
	filter, err := newAccessFilter(s.Access, s.AccessSample)
	if err != nil {
		return nil, err
	}
	l := &Log{}
	out, echo := stderr, io.Writer(nil)
	if s.File != "" {
		if s.FileMaxBytes < 1 {
			return nil, fmt.Errorf("log-max-size-mb: must be at least 1")
		}
		if l.file, err = newRotatingFile(s.File, s.FileMaxBytes, s.FileBackups); err != nil {
			return nil, fmt.Errorf("log-file: %w", err)
		}
		// The file's troubles are said on stderr alone: the file is where they are. The
		// rotatingFile calls it from the LogWriter's goroutine (or under its lock after
		// Close), as the echo is written, so the two never write to stderr at once.
		warnings, err := newLogger(stderr, s.Level, s.Format, nil)
		if err != nil {
			_ = l.file.Close()
			return nil, err
		}
		l.file.warn = func(msg string, err error) { warnings.Warn(msg, "problem", err.Error()) }
		out, echo = l.file, stderr
	}
	l.writer = newLogWriter(out, echo, s.AccessToStderr)
	if l.Logger, err = newLogger(l.writer, s.Level, s.Format, filter); err != nil {
		_ = l.Close()
		return nil, err
	}
	l.dropped = append(l.dropped, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mockgateway_access_log_dropped_total",
		Help: "Access lines left out by --access-log: every success's with errors, all but 1 in N with sample.",
	}, func() float64 { return float64(filter.dropped()) }))
	if l.file != nil {
		for why := range troubles {
			l.dropped = append(l.dropped, prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "mockgateway_log_file_dropped_total",
				Help:        "Log lines not written to --log-file: not_rotated, the file was full and could be neither rotated nor emptied; not_written, it could not be opened or written.",
				ConstLabels: prometheus.Labels{"reason": troubleNames[why].label},
			}, func() float64 { return float64(l.file.dropped[why].Load()) }))
		}
	}
	return l, nil
}

// Collector is the counts of lines left out — mockgateway_access_log_dropped_total and, with a
// file, mockgateway_log_file_dropped_total — for the service's registry.
func (l *Log) Collector() prometheus.Collector { return l.dropped }

// collectorSet is several collectors registered as one.
type collectorSet []prometheus.Collector

func (c collectorSet) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		m.Describe(ch)
	}
}

func (c collectorSet) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		m.Collect(ch)
	}
}

// Close writes what is pending, then closes the file; lines logged later go straight to it.
func (l *Log) Close() error {
	_ = l.writer.Close()
	if l.file != nil {
		return l.file.Close()
	}
	return nil
}

// accessFilter is --access-log: which access lines are written. Failures always are: a status of
// 400 or more, an error code, or a stream whose outcome is not completed (a cut stream is a 200
// without an error code). Of the successes, "errors" keeps none and "sample" the first of every
// N, counted in arrival order — a deterministic 1 in N, not a random one.
type accessFilter struct {
	sample bool // "sample"; else "errors"
	every  uint64
	// successes counts the successes judged (not under "all"); what was dropped follows from it.
	successes atomic.Uint64
}

func newAccessFilter(mode string, every int) (*accessFilter, error) {
	switch {
	case mode == "all":
		return nil, nil // a nil filter keeps every line at no cost
	case mode == "errors", mode == "sample" && every >= 1:
		return &accessFilter{sample: mode == "sample", every: uint64(every)}, nil
	case mode == "sample":
		return nil, fmt.Errorf("access-log-sample: must be at least 1")
	}
	return nil, fmt.Errorf("access-log: %q is not all, errors or sample", mode)
}

// keep reports whether the request's access line is written.
func (f *accessFilter) keep(rec *Record) bool {
	if f == nil || rec.Status >= 400 || rec.ErrorCode != "" || (rec.StreamOutcome != "" && rec.StreamOutcome != OutcomeCompleted) {
		return true
	}
	n := f.successes.Add(1)
	return f.sample && (n-1)%f.every == 0
}

func (f *accessFilter) dropped() uint64 {
	if f == nil {
		return 0
	}
	n := f.successes.Load()
	if f.sample {
		return n - (n+f.every-1)/f.every
	}
	return n
}
