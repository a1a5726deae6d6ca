//go:build !unix

package observability

import (
	"errors"
	"os"
)

// openNoFollow opens name with flag, refusing a symbolic link. Without O_NOFOLLOW the link is
// looked for before the open, which a link planted in between escapes: the service is meant
// for Linux, where openFlags closes that gap.
func openNoFollow(name string, flag int) (*os.File, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: errors.New("a symbolic link")}
	}
	return os.OpenFile(name, flag, 0o644)
}
