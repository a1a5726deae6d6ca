package protocol

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"mockgateway/internal/apierr"
)

// Paths name where a problem is in a request — messages[0].content — for an error's param and
// message, and nothing else reads them: no check depends on a path. A request that decodes
// cleanly, nearly every one, needs none, so the decoder first runs with its root path unnamed,
// which joinPath and indexPath leave as it is at no cost, and only when that run finds a problem
// runs again with named paths, to report the same problem with its place
// (decodeWithPathsOnError). The two runs take the same steps to the same first problem;
// FuzzDecodeChatRequest and FuzzDecodeResponsesRequest compare them. Naming every member and
// element eagerly cost a clean request an allocation a path (TestDecodeAllocations holds the
// count; the figures are in docs/performance.md).

// The roots of the two runs. A named path never holds a NUL (joinPath turns a key's
// non-printable characters into '?'), so the unnamed root cannot be taken for one.
const (
	namedRoot   = "" // a top-level member's path is its key
	unnamedRoot = "\x00"
)

// decodeWithPathsOnError runs decode with unnamed paths and, only if it finds a problem, again
// with named ones, returning the named run's error. decode must decide alike whatever its root: a path may
// go into an error, never into a decision.
func decodeWithPathsOnError[R any](decode func(root string) (R, *apierr.Error)) (R, *apierr.Error) {
	r, e := decode(unnamedRoot)
	if e == nil {
		return r, nil
	}
	var none R
	if _, named := decode(namedRoot); named != nil { // never nil where the unnamed run failed
		e = named
	}
	return none, e
}

// plainKey reports a key that is short printable ASCII, which joinPath can use as it is.
func plainKey(key string) bool {
	if key == "" || len(key) > maxKeyCharsInPath {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// indexPath names an array element: path[i]. It avoids fmt: a failing request names one path
// per level down to its problem.
func indexPath(path string, i int) string {
	if path == unnamedRoot {
		return path
	}
	return path + "[" + strconv.Itoa(i) + "]"
}

// joinPath appends a key to a path. Keys are cut to 64 characters and non-printable characters
// become '?', since an unknown key is the client's text.
func joinPath(path, key string) string {
	if path == unnamedRoot {
		return path
	}
	if plainKey(key) {
		// The common case, a protocol field name: nothing to cut or replace.
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return string(appendKeyToPath([]byte(path), key))
}

// appendKeyToPath is joinPath for a path being built in place, which names a place many levels
// deep in one allocation where joining level by level costs the square of the depth.
func appendKeyToPath(path []byte, key string) []byte {
	if len(path) > 0 {
		path = append(path, '.')
	}
	if plainKey(key) {
		return append(path, key...)
	}
	if key == "" {
		return append(path, `""`...)
	}
	n := 0
	for _, r := range key {
		if n == maxKeyCharsInPath {
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		path = utf8.AppendRune(path, r)
		n++
	}
	return path
}

// appendIndexToPath is indexPath for a path being built in place.
func appendIndexToPath(path []byte, i int) []byte {
	path = append(path, '[')
	path = strconv.AppendInt(path, int64(i), 10)
	return append(path, ']')
}
