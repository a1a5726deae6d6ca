package observability

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"mockgateway/internal/testutil"
)

// TestLogFileStaysBoundedWhenRotationFails: FILE.1 a directory with something in it can be
// neither removed nor replaced, so the file cannot be renamed, nor copied, to FILE.1; the log
// must still never pass its size, whatever is written. The lines that do not fit are dropped and
// counted, with one warning; once FILE.1 is cleared, the next try rotates again.
func TestLogFileStaysBoundedWhenRotationFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mockgateway.log")
	if err := os.MkdirAll(filepath.Join(path+".1", "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	const max = 64 << 10
	f, err := newRotatingFile(path, max, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var warnings []string
	f.warn = func(msg string, err error) { warnings = append(warnings, msg+": "+err.Error()) }
	clock := time.Now()
	f.now = func() time.Time { return clock }
	batch := []byte(strings.Repeat(fmt.Sprintf("%099d\n", 0), 40)) // 4,000 bytes, as LogWriter hands them over
	for i := 0; i < 1000; i++ {                                    // 4 MB: sixty times the size
		_, _ = f.Write(batch)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > max {
			t.Fatalf("after %d bytes written the log is %d bytes, past its size %d", (i+1)*len(batch), st.Size(), max)
		}
	}
	if got, want := f.dropped[notRotated].Load(), uint64(1000*40-max/100); got != want {
		t.Errorf("%d lines counted as dropped, want %d", got, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "not rotated") || !strings.Contains(warnings[0], path+".1") {
		t.Errorf("warnings %q, want one, saying the file was not rotated and why", warnings)
	}
	// Cleared, FILE.1 takes the file at the next try, not before.
	if err := os.RemoveAll(path + ".1"); err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(batch)
	if _, err := os.Stat(path + ".1"); err == nil {
		t.Fatal("rotated again before the retry was due")
	}
	clock = clock.Add(rotateRetry)
	if _, err := f.Write(batch); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + ".1"); err != nil || st.Size() != max-max%100 {
		t.Errorf("FILE.1 after the retry: %v, want the full file", err)
	}
	if data, err := os.ReadFile(path); err != nil || len(data) != len(batch) {
		t.Errorf("the log after the retry: %d bytes (%v), want the one batch", len(data), err)
	}
}

// TestLogFileRotatesByCopyWhenItCannotBeRenamed: a file bind-mounted on its own into a container
// can be neither renamed nor removed (EBUSY); it is copied to FILE.1 and emptied in place, so
// the log keeps its size and its backups, every line whole and in order, with one warning.
func TestLogFileRotatesByCopyWhenItCannotBeRenamed(t *testing.T) {
	for _, backups := range []int{0, 1, 3} {
		t.Run(fmt.Sprint("backups=", backups), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mockgateway.log")
			f, err := newRotatingFile(path, 1000, backups)
			if err != nil {
				t.Fatal(err)
			}
			busy := func(name string) error {
				if name == path {
					return &os.LinkError{Op: "rename", Old: path, Err: syscall.EBUSY}
				}
				return nil
			}
			f.rename = func(from, to string) error {
				if err := busy(from); err != nil {
					return err
				}
				return os.Rename(from, to)
			}
			f.remove = func(name string) error {
				if err := busy(name); err != nil {
					return err
				}
				return os.Remove(name)
			}
			var warnings []string
			f.warn = func(msg string, err error) { warnings = append(warnings, msg+": "+err.Error()) }
			writeLines(t, f, 0, 500)
			checkRotated(t, path, backups, 500)
			if len(warnings) != 1 || !strings.Contains(warnings[0], "copying") || !strings.Contains(warnings[0], "busy") {
				t.Errorf("warnings %q, want one, saying the file is rotated by copying, and why", warnings)
			}
			if n := f.dropped[notRotated].Load() + f.dropped[notWritten].Load(); n != 0 {
				t.Errorf("%d lines dropped", n)
			}
		})
	}
}

// TestLogFileTroubleIsWarnedAndCounted: the service's log says once, on stderr, that its file
// could not be rotated, and mockgateway_log_file_dropped_total counts the lines it left out.
func TestLogFileTroubleIsWarnedAndCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mockgateway.log")
	if err := os.MkdirAll(filepath.Join(path+".1", "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stderr testutil.SyncBuffer
	l, err := OpenLog(LogSettings{Level: "info", Format: "json", File: path, FileMaxBytes: 1000, FileBackups: 1, Access: "all"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(l.Collector())
	for range 100 { // about 190 bytes each: 5 fit in the file
		l.Logger.Info("listening", "addr", strings.Repeat("x", 100))
	}
	_ = l.Close()
	if n := strings.Count(stderr.String(), "log file full and not rotated"); n != 1 || !strings.Contains(stderr.String(), `"level":"WARN"`) {
		t.Errorf("stderr warned %d times, want once at warn:\n%s", n, stderr.String())
	}
	const want = `
# HELP mockgateway_log_file_dropped_total Log lines not written to --log-file: not_rotated, the file was full and could be neither rotated nor emptied; not_written, it could not be opened or written.
# TYPE mockgateway_log_file_dropped_total counter
mockgateway_log_file_dropped_total{reason="not_rotated"} 95
mockgateway_log_file_dropped_total{reason="not_written"} 0
`
	if err := promtest.GatherAndCompare(reg, strings.NewReader(want), "mockgateway_log_file_dropped_total"); err != nil {
		t.Error(err)
	}
}
