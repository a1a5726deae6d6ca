package observability

import (
	"fmt"
	"io"
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
			bindMounted(f)
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

// bindMounted makes f's file one that can be neither renamed nor removed (EBUSY), as a file
// bind-mounted on its own into a container; other names are renamed and removed as usual.
func bindMounted(f *rotatingFile) {
	f.rename = func(from, to string) error {
		if from == f.path {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EBUSY}
		}
		return os.Rename(from, to)
	}
	f.remove = func(name string) error {
		if name == f.path {
			return &os.PathError{Op: "remove", Path: name, Err: syscall.EBUSY}
		}
		return os.Remove(name)
	}
}

// TestLogFileKeepsItsBackupsWhileRotationFails: a file that cannot be renamed, on a disk too full
// to copy it, stays full and its lines are dropped; try after try, its backups stay as they
// were — none shifted away, none emptied or cut by a copy that failed half way — and once the
// disk has room the next try rotates as usual.
func TestLogFileKeepsItsBackupsWhileRotationFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mockgateway.log")
	f, err := newRotatingFile(path, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	f.now = func() time.Time { return clock }
	writeLines(t, f, 0, 80) // the file and its three backups, each full
	read := func(name string) string {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	var before []string
	for i := 1; i <= 3; i++ {
		before = append(before, read(f.backup(i)))
	}
	live := read(path)
	bindMounted(f)
	f.copy = func(dst io.Writer, src io.Reader) (int64, error) {
		n, _ := io.CopyN(dst, src, 300) // a part, then the disk is full
		return n, &os.PathError{Op: "write", Path: "backup", Err: syscall.ENOSPC}
	}
	for try := range 5 {
		writeLines(t, f, 1000+try, 1)
		clock = clock.Add(rotateRetry)
		for i := 1; i <= 3; i++ {
			if got := read(f.backup(i)); got != before[i-1] {
				t.Fatalf("after %d failed tries FILE.%d holds %d bytes, not its %d", try+1, i, len(got), len(before[i-1]))
			}
		}
		if got := read(path); got != live {
			t.Fatalf("after %d failed tries the log holds %d bytes, not its %d", try+1, len(got), len(live))
		}
	}
	if got := f.dropped[notRotated].Load(); got != 5 {
		t.Errorf("%d lines dropped, want the 5 written", got)
	}
	f.copy = io.Copy
	writeLines(t, f, 2000, 1)
	if got := read(f.backup(1)); got != live {
		t.Errorf("FILE.1 after the disk has room: %d bytes, want the full log's %d", len(got), len(live))
	}
	if got := read(f.backup(2)); got != before[0] {
		t.Error("FILE.2 after the disk has room is not the old FILE.1")
	}
	if got := read(path); got != fmt.Sprintf("line %05d %s\n", 2000, strings.Repeat("x", 38)) {
		t.Errorf("the log after the rotation: %q", got)
	}
	if _, err := os.Lstat(f.backup(1) + ".tmp"); err == nil {
		t.Error("a copy's temporary file is left behind")
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
