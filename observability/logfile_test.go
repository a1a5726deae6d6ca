package observability

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeLines writes n numbered lines of 50 bytes through a LogWriter, as the service does, and
// closes both.
func writeLines(t *testing.T, f *rotatingFile, from, n int) {
	t.Helper()
	lw := NewLogWriter(f)
	for i := from; i < from+n; i++ {
		fmt.Fprintf(lw, "line %05d %s\n", i, strings.Repeat("x", 38))
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// keptLines reads the log and its backups, oldest first, and checks that every file holds whole
// lines within max bytes.
func keptLines(t *testing.T, path string, max int64) (files []string, lines []string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		files = append(files, e.Name())
	}
	for i := len(files) - 1; i >= 0; i-- {
		name := filepath.Base(path)
		if i > 0 {
			name += fmt.Sprintf(".%d", i)
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		if err != nil {
			t.Fatalf("%v (files %v)", err, files)
		}
		if int64(len(data)) > max || (len(data) > 0 && data[len(data)-1] != '\n') {
			t.Errorf("%s: %d bytes (at most %d), ends in a whole line: %v", name, len(data), max, len(data) == 0 || data[len(data)-1] == '\n')
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")...)
	}
	return files, lines
}

// TestLogFileRotatesAtItsSize: the file is rotated before it would pass its size, at a line's
// end, into name.1 (the newest) … name.N; older backups are removed, so the log takes at most
// (N+1) × size on disk, and what is kept is the most recent lines, each whole, in order.
func TestLogFileRotatesAtItsSize(t *testing.T) {
	for _, backups := range []int{0, 1, 3} {
		t.Run(fmt.Sprint("backups=", backups), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mockgateway.log")
			f, err := newRotatingFile(path, 1000, backups)
			if err != nil {
				t.Fatal(err)
			}
			writeLines(t, f, 0, 500) // 25,000 bytes: 25 files' worth
			checkRotated(t, path, backups, 500)
		})
	}
}

// checkRotated checks that the log of 1,000-byte files after writeLines wrote n lines is
// FILE and its backups, no more, each full, holding the last lines in order.
func checkRotated(t *testing.T, path string, backups, n int) {
	t.Helper()
	files, lines := keptLines(t, path, 1000)
	want := []string{filepath.Base(path)}
	for i := 1; i <= backups; i++ {
		want = append(want, fmt.Sprintf("%s.%d", filepath.Base(path), i))
	}
	if !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	// Each file holds 20 lines (1,000 bytes), so the 500th line ends a full file.
	if len(lines) != 20*(backups+1) {
		t.Errorf("%d lines kept, want %d", len(lines), 20*(backups+1))
	}
	for i, l := range lines {
		if want := fmt.Sprintf("line %05d ", n-len(lines)+i); !strings.HasPrefix(l, want) {
			t.Fatalf("line %d is %q, want it to begin %q", i, l, want)
		}
	}
}

// TestLogFileContinuesAnExistingFile: a restart appends to the file it finds and counts what is
// in it against the size; a line longer than the size goes alone into a file of its own.
func TestLogFileContinuesAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mockgateway.log")
	if err := os.WriteFile(path, []byte(strings.Repeat("old line\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := newRotatingFile(path, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	writeLines(t, f, 0, 1) // 900 + 50 bytes: still fits
	f, err = newRotatingFile(path, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	writeLines(t, f, 1, 1) // 950 + 50: fits exactly
	f, err = newRotatingFile(path, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("y", 1500) + "\n"
	if _, err := f.Write([]byte("short\n" + long + "short again\n")); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	for name, want := range map[string]string{
		"mockgateway.log":   "short again\n",
		"mockgateway.log.1": long,
		"mockgateway.log.2": "short\n",
	} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		if err != nil || string(data) != want {
			t.Errorf("%s: %d bytes (%v), want %d", name, len(data), err, len(want))
		}
	}
}
