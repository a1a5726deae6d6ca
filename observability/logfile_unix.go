//go:build unix

package observability

import (
	"os"
	"syscall"
)

// openFlags are added to every open of a log file. O_NOFOLLOW: a symbolic link planted at the
// path, before start-up or between two rotations, is refused rather than followed to a file the
// service would then append to, or truncate. O_NONBLOCK: a FIFO at the path fails at once (or
// opens, and is refused as not a regular file) instead of holding the open until something reads
// it; on a regular file it changes nothing.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// openNoFollow opens name with flag and openFlags.
func openNoFollow(name string, flag int) (*os.File, error) {
	return os.OpenFile(name, flag|openFlags, 0o644)
}
