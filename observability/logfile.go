package observability

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync"
)

// rotatingFile is the --log-file sink: it appends to the file and, before a write would take it
// past its size, renames it to FILE.1 (FILE.1 to FILE.2, and so on) and starts a new one, so
// that the log never takes more than (backups+1) × size on disk, whatever the load.
//
// It sits beneath the LogWriter, whose one goroutine hands it whole batches of whole lines; it
// cuts a batch at a line's end, so every file holds whole lines and none passes the size —
// unless a single line is longer, which then gets a file of its own. Old backups are removed
// as the rotation happens, in the same call: no goroutine of its own, nothing left running
// after Close.
//
// Not gopkg.in/natefinch/lumberjack.v2, which the service would otherwise use: its size is whole
// megabytes, it refuses a write larger than that (a batch can be), it removes old backups in a
// goroutine that Close does not stop, and its backup names (a timestamp to the millisecond)
// collide when two rotations fall within the same millisecond.
type rotatingFile struct {
	mu      sync.Mutex
	path    string
	max     int64
	backups int
	file    *os.File // nil after a failed open: the next write tries again
	size    int64
}

// newRotatingFile opens path for appending (creating it), counting what it already holds
// against maxBytes.
func newRotatingFile(path string, maxBytes int64, backups int) (*rotatingFile, error) {
	f := &rotatingFile{path: path, max: maxBytes, backups: backups}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *rotatingFile) open() error {
	file, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	st, err := file.Stat()
	if err != nil {
		_ = file.Close()
		return err
	}
	f.file, f.size = file, st.Size()
	return nil
}

// Write appends p, rotating first whenever the next lines would not fit.
func (f *rotatingFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	written := 0
	for len(p) > 0 {
		n := f.fits(p)
		if n == 0 {
			if err := f.rotate(); err == nil {
				continue
			}
			// A rotation refused (a rename, say): the lines are kept, past the size, rather
			// than lost.
			n = len(p)
		}
		if f.file == nil {
			if err := f.open(); err != nil {
				return written, err
			}
		}
		m, err := f.file.Write(p[:n])
		f.size += int64(m)
		written += m
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// fits is how much of p goes into the current file: all of it within the size, else the whole
// lines that fit; 0 when none does and the file must be rotated first. An empty file takes the
// first line however long it is.
func (f *rotatingFile) fits(p []byte) int {
	if f.size+int64(len(p)) <= f.max {
		return len(p)
	}
	if room := f.max - f.size; room > 0 {
		if n := bytes.LastIndexByte(p[:room], '\n') + 1; n > 0 {
			return n
		}
	}
	if f.size > 0 {
		return 0
	}
	if n := bytes.IndexByte(p, '\n') + 1; n > 0 {
		return n
	}
	return len(p)
}

// rotate moves the backups up by one, dropping the oldest, makes the file FILE.1 (or removes it
// when no backup is kept) and opens a new one.
func (f *rotatingFile) rotate() error {
	if f.file != nil {
		_ = f.file.Close()
		f.file = nil
	}
	var err error
	if f.backups == 0 {
		err = os.Remove(f.path)
	} else {
		_ = os.Remove(f.backup(f.backups))
		for i := f.backups - 1; i >= 1; i-- {
			_ = os.Rename(f.backup(i), f.backup(i+1)) // a missing backup is no matter
		}
		err = os.Rename(f.path, f.backup(1))
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = nil // removed from under the service: a new file starts all the same
	}
	if openErr := f.open(); openErr != nil {
		return openErr
	}
	return err
}

func (f *rotatingFile) backup(i int) string { return f.path + "." + strconv.Itoa(i) }

// Close closes the file; a later Write opens it again.
func (f *rotatingFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file == nil {
		return nil
	}
	err := f.file.Close()
	f.file = nil
	return err
}
