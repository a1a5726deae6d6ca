package observability

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// rotateRetry is how long a full log file that could not be rotated waits before the rotation is
// tried again: a try may copy a whole file's worth, and a busy service hands the file a batch at
// every flush of its LogWriter.
const rotateRetry = 10 * time.Second

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
// The size holds whatever fails. A file that cannot be renamed (one bind-mounted on its own
// into a container) is copied to FILE.1 and emptied in place; one that can be neither, full,
// takes no more lines — they are dropped and counted — until a later try succeeds. Only a
// regular file is opened, never through a symbolic link (openLogFile).
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
	// rename and remove are os.Rename and os.Remove; tests make them fail as they fail on a
	// bind-mounted file.
	rename func(oldpath, newpath string) error
	remove func(name string) error
	// copy is io.Copy, the copy of a file that cannot be renamed; tests make it fail as a full
	// disk does.
	copy func(dst io.Writer, src io.Reader) (int64, error)
	now  func() time.Time
	// stuck: the file is full and could not be rotated; the next try is at retry.
	stuck bool
	retry time.Time
	// warn, when set, is told once of each trouble (and of the first rotation by copying), to
	// say it on stderr: not in the file, which is where the trouble is.
	warn       func(msg string, err error)
	warned     [troubles]bool
	warnedCopy bool
	// dropped counts the lines not written, by trouble.
	dropped [troubles]atomic.Uint64
}

// trouble is why lines were not written to the file.
type trouble int

const (
	notRotated trouble = iota // the file is full and could be neither rotated nor emptied
	notWritten                // the file could not be opened or written
	troubles
)

var troubleNames = [troubles]struct{ label, warning string }{
	notRotated: {"not_rotated", "log file full and not rotated; its lines are dropped until it is"},
	notWritten: {"not_written", "log file not written; its lines are dropped"},
}

// newRotatingFile opens path for appending (creating it), counting what it already holds
// against maxBytes.
func newRotatingFile(path string, maxBytes int64, backups int) (*rotatingFile, error) {
	f := &rotatingFile{path: path, max: maxBytes, backups: backups, rename: os.Rename, remove: os.Remove, copy: io.Copy, now: time.Now}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *rotatingFile) open() error {
	// Read as well as write: a file that cannot be renamed is copied from this descriptor.
	file, size, err := openLogFile(f.path, os.O_CREATE|os.O_RDWR|os.O_APPEND)
	if err != nil {
		return err
	}
	f.file, f.size = file, size
	return nil
}

// openLogFile opens name, refusing anything but a regular file: a symbolic link (openNoFollow),
// a FIFO, a device, a directory, a socket.
func openLogFile(name string, flag int) (*os.File, int64, error) {
	file, err := openNoFollow(name, flag)
	if err != nil {
		if st, lerr := os.Lstat(name); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return nil, 0, fmt.Errorf("%s is a symbolic link: give the path of the file itself", name)
		} else if lerr == nil && !st.Mode().IsRegular() {
			return nil, 0, notRegular(name, st.Mode())
		}
		return nil, 0, err
	}
	st, err := file.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = notRegular(name, st.Mode())
	}
	if err != nil {
		_ = file.Close()
		return nil, 0, err
	}
	return file, st.Size(), nil
}

func notRegular(name string, mode fs.FileMode) error {
	kind := "a " + mode.Type().String()
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	case mode&fs.ModeDir != 0:
		kind = "a directory"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("%s is not a regular file but %s", name, kind)
}

// Write appends p, rotating first whenever the next lines would not fit.
func (f *rotatingFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	written := 0
	for len(p) > 0 {
		if f.file == nil {
			if err := f.open(); err != nil {
				f.drop(notWritten, p, err)
				return written, err
			}
		}
		n := f.fits(p)
		if n == 0 {
			if err := f.rotate(); err != nil {
				f.drop(notRotated, p, err)
				return written, err
			}
			continue
		}
		m, err := f.file.Write(p[:n])
		f.size += int64(m)
		written += m
		if err != nil {
			f.drop(notWritten, p[m:], err)
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

// errStuck is a write to a full file whose last rotation failed, before the next try.
var errStuck = errors.New("log file full: not rotated")

// rotate makes room in the full file: moves it away, or, when it cannot be moved, copies it
// to FILE.1 and empties it. When neither works the file stays as it is, full, and the next try
// waits rotateRetry.
func (f *rotatingFile) rotate() error {
	if f.stuck && f.now().Before(f.retry) {
		return errStuck
	}
	moveErr := f.move()
	if moveErr == nil {
		f.stuck = false
		return nil
	}
	if err := f.copyTruncate(); err != nil {
		f.stuck, f.retry = true, f.now().Add(rotateRetry)
		return errors.Join(moveErr, err)
	}
	f.stuck = false
	if !f.warnedCopy && f.warn != nil {
		f.warnedCopy = true
		f.warn("log file not renamed; rotated by copying it and emptying it in place", moveErr)
	}
	return nil
}

// move makes the file FILE.1, the backups moving up by one and the oldest dropping out (or
// removes it when no backup is kept); the next write opens a new one. The file is renamed aside
// first and the backups shifted only once that worked, so a file that cannot be moved costs no
// backup, however often it is tried.
func (f *rotatingFile) move() error {
	if f.file != nil {
		_ = f.file.Close()
		f.file = nil
	}
	if f.backups == 0 {
		if err := f.remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	aside := f.aside()
	if err := f.rename(f.path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed from under the service: a new file starts all the same
		}
		return err
	}
	if err := f.shiftIn(aside); err != nil {
		_ = f.rename(aside, f.path) // back where it was, to be copied
		return err
	}
	return nil
}

// copyTruncate rotates a file that cannot be moved — one bind-mounted on its own into a
// container can be neither renamed nor removed — by copying it to FILE.1 and emptying it in
// place. The copy is made aside, in a file of its own, and shifted in only once whole: a copy
// that fails (a full disk) leaves the backups as they were.
func (f *rotatingFile) copyTruncate() error {
	if f.file == nil {
		if err := f.open(); err != nil {
			return err
		}
	}
	if f.backups > 0 {
		aside := f.aside()
		if err := f.remove(aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// O_EXCL: a file, or a link, planted at the name since is refused, not written through.
		backup, _, err := openLogFile(aside, os.O_CREATE|os.O_EXCL|os.O_WRONLY)
		if err != nil {
			return err
		}
		_, err = f.copy(backup, io.NewSectionReader(f.file, 0, f.size))
		if cerr := backup.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = f.shiftIn(aside)
		}
		if err != nil {
			_ = f.remove(aside)
			return err
		}
	}
	if err := f.file.Truncate(0); err != nil {
		return err // FILE.1 holds the copy: the next try makes another, and loses nothing
	}
	f.size = 0
	return nil
}

// shiftIn moves the backups up by one, the oldest replaced by the one before it, and renames
// aside (the file, or its copy) to FILE.1. It stops at the first backup that cannot be moved,
// before anything replaces it.
func (f *rotatingFile) shiftIn(aside string) error {
	for i := f.backups - 1; i >= 1; i-- {
		if err := f.rename(f.backup(i), f.backup(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err // a missing backup is no matter
		}
	}
	return f.rename(aside, f.backup(1))
}

// aside is where the file, or its copy, waits until the backups have moved up.
func (f *rotatingFile) aside() string { return f.backup(1) + ".tmp" }

// drop counts the lines of p as not written, and warns of the trouble the first time.
func (f *rotatingFile) drop(why trouble, p []byte, err error) {
	n := bytes.Count(p, []byte{'\n'})
	if len(p) > 0 && p[len(p)-1] != '\n' {
		n++
	}
	f.dropped[why].Add(uint64(n))
	if !f.warned[why] && f.warn != nil {
		f.warned[why] = true
		f.warn(troubleNames[why].warning, err)
	}
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
