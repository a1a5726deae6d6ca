package quota

import (
	"net/http"
	"strconv"
	"time"
)

// maxHeaders bounds the headers one HeaderValues holds: a dialect's most (Anthropic's four
// buckets of three, and two on a refusal).
const maxHeaders = 16

// HeaderValues collects a status's response headers and sets them all at once with two
// allocations, whatever their number: their values are appended to one buffer and become one
// string, each header a slice of it, and their value slices share one array. Set each header
// once, under its canonical name (http.CanonicalHeaderKey's form): the names go into the map as
// given, not canonicalised again. A zero HeaderValues is ready; keep it on the stack (it holds
// no pointer into itself, so it stays there).
type HeaderValues struct {
	n     int
	names [maxHeaders]string
	ends  [maxHeaders]int
	size  int       // of arr in use, while spill is nil
	arr   [384]byte // the values, while they fit
	spill []byte    // the values, once they did not
}

// Int adds the header name with the decimal v.
func (hv *HeaderValues) Int(name string, v int64) {
	hv.add(name, strconv.AppendInt(hv.next(), v, 10))
}

// String adds the header name with the value v.
func (hv *HeaderValues) String(name, v string) {
	hv.add(name, append(hv.next(), v...))
}

// Time adds the header name with t in layout.
func (hv *HeaderValues) Time(name string, t time.Time, layout string) {
	hv.add(name, t.AppendFormat(hv.next(), layout))
}

// next is the values so far, to append the next one to.
func (hv *HeaderValues) next() []byte {
	if hv.spill != nil {
		return hv.spill
	}
	return hv.arr[:hv.size]
}

// add records name's value, the end of all: written into arr when it fit, else copied to
// spill (a copy per value past arr's bytes, which no dialect's headers reach).
func (hv *HeaderValues) add(name string, all []byte) {
	if hv.n == maxHeaders {
		panic("quota: more than maxHeaders headers")
	}
	if hv.spill == nil && len(all) <= len(hv.arr) {
		hv.size = len(all)
	} else { // copied, never kept: a pointer kept from next() could be into arr, and move hv to the heap
		hv.spill = append([]byte(nil), all...)
	}
	hv.names[hv.n], hv.ends[hv.n] = name, len(all)
	hv.n++
}

// SetOn sets the headers collected on h, replacing what h had under their names.
func (hv *HeaderValues) SetOn(h http.Header) {
	if hv.n == 0 {
		return
	}
	all := string(hv.next())
	values := make([]string, hv.n)
	start := 0
	for i, name := range hv.names[:hv.n] {
		values[i] = all[start:hv.ends[i]]
		h[name] = values[i : i+1 : i+1] // capped: an Add to one header never writes over the next
		start = hv.ends[i]
	}
}
