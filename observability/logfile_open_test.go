//go:build unix

package observability

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLogFileRefusesASymlink: a symbolic link at --log-file is refused at start-up, with the flag
// named, and the file it points to is left as it was.
func TestLogFileRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("not a log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mockgateway.log")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLog(LogSettings{Level: "info", Format: "json", File: path, FileMaxBytes: 1 << 20, FileBackups: 1, Access: "all"}, io.Discard)
	if err == nil {
		l.Logger.Info("listening")
		_ = l.Close()
		t.Error("OpenLog followed a symbolic link at the log's path")
	} else if !strings.HasPrefix(err.Error(), "log-file: ") || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("error %q: want it to name log-file and say it is a symbolic link", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "not a log\n" {
		t.Errorf("the link's target now holds %q", data)
	}
}

// TestLogFileRefusesAFIFO: a FIFO at --log-file is refused at start-up, at once, whether or not
// something reads it; so is a device.
func TestLogFileRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mockgateway.log")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := newRotatingFile(path, 1<<20, 1)
		if err == nil {
			_ = f.Close()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		// Release the open, which waits for a reader, so that the goroutine ends.
		if r, rerr := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); rerr == nil {
			defer r.Close()
		}
		<-done
		t.Fatal("opening a FIFO at the log's path waits for a reader")
	}
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: error %v, want it refused as not a regular file", err)
	}
	// With a reader the open succeeds, and the file's type refuses it.
	r, rerr := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if rerr != nil {
		t.Fatal(rerr)
	}
	defer r.Close()
	if f, err := newRotatingFile(path, 1<<20, 1); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		if err == nil {
			_ = f.Close()
		}
		t.Errorf("FIFO with a reader: error %v, want it refused as not a regular file", err)
	}
	if f, err := newRotatingFile(os.DevNull, 1<<20, 1); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		if err == nil {
			_ = f.Close()
		}
		t.Errorf("%s: error %v, want it refused as not a regular file", os.DevNull, err)
	}
}

// TestLogFileRefusesASymlinkPlantedBetweenRotations: a symbolic link planted at the path once
// the file has been moved away is not followed when the next file is made: its target is left as
// it was, and the lines are dropped and counted, with one warning.
func TestLogFileRefusesASymlinkPlantedBetweenRotations(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("not a log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mockgateway.log")
	f, err := newRotatingFile(path, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	planted := false
	f.rename = func(from, to string) error {
		err := os.Rename(from, to)
		if err == nil && from == path && !planted {
			planted, err = true, os.Symlink(target, path)
		}
		return err
	}
	var warnings []string
	f.warn = func(msg string, err error) { warnings = append(warnings, msg+": "+err.Error()) }
	writeLines(t, f, 0, 100)
	if data, _ := os.ReadFile(target); string(data) != "not a log\n" {
		t.Errorf("the link's target now holds %d bytes", len(data))
	}
	if got := f.dropped[notWritten].Load(); got != 80 {
		t.Errorf("%d lines counted as not written, want 80: the link stays where it was planted", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "symbolic link") {
		t.Errorf("warnings %q, want one, saying the path is a symbolic link", warnings)
	}
}
