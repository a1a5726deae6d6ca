package protocol

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"mockgateway/internal/apierr"
)

// What a Messages request's images and documents bring to its prompt (Attachments): the
// estimator counts an image by its size in pixels, a PDF by its size in bytes, and a
// document's or a search result's text as text (docs/protocol.md, Usage numbers). The decoder
// reads no more of them than that takes: an image's size from the first bytes of its data,
// never the image; a PDF's size from its data's length. What it cannot read — a source of
// another shape, data that is no image — it counts by the rule's fallback, never as an error:
// these sources were accepted unread before they were counted, and still are.
//
// decodeBlock calls readSource and readSearchContent, frames of their own (go:noinline), as
// digest in decode_anthropic_blocks.go: decodeBlock is reentered by nested tool results, and a
// few more bytes of its frame doubled a parked stream's stack (TestParkedStreamStack).

// imageHeaderBytes bounds what is read of an image's decoded data for its size. PNG, GIF and
// WebP state it in their first bytes; a JPEG states it after its metadata segments (Exif,
// ICC profiles), which this leaves room for. An image whose size is not within it counts as
// one of unknown size.
const imageHeaderBytes = 256 << 10

// readSource checks an image's or a document's source, an object, and notes what it brings.
// Of its members the mock reads what the estimator counts, and accepts the others unread.
//
//go:noinline
func (t *anthropicTurn) readSource(isImage bool, path, v string) *apierr.Error {
	if e := isObject(path, v); e != nil {
		return e
	}
	if isImage {
		t.readImageSource(v)
	} else {
		t.readDocumentSource(v)
	}
	return nil
}

// readSearchContent checks a search result's content, an array, and notes its text blocks.
//
//go:noinline
func (t *anthropicTurn) readSearchContent(path, v string) *apierr.Error {
	if e := isArray(path, v); e != nil {
		return e
	}
	t.readContentBlocks(v)
	return nil
}

// readImageSource notes the image of an image block's source.
func (t *anthropicTurn) readImageSource(v string) {
	size := ImageSize{}
	var room stackMembers
	if o, e := asObject(room[:0], "", v); e == nil && typeOf(o) == "base64" {
		data, _ := o.get("data")
		size = readImageSize(data)
	}
	a := t.req.attachments()
	a.Images = append(a.Images, size)
}

// readDocumentSource notes what a document block's source brings: a PDF's size (a url or file
// one is of unknown size), a plain-text document's text, a content document's text and images.
func (t *anthropicTurn) readDocumentSource(v string) {
	var room stackMembers
	o, e := asObject(room[:0], "", v)
	if e != nil {
		return
	}
	switch typeOf(o) {
	case "base64":
		data, _ := o.get("data")
		n := 0
		if jsonKind(data) == '"' {
			n = (len(data) - 2) * 3 / 4 // its length decoded, escapes and padding aside
		}
		a := t.req.attachments()
		a.PDFBytes = append(a.PDFBytes, n)
	case "url", "file":
		a := t.req.attachments()
		a.PDFBytes = append(a.PDFBytes, 0)
	case "text":
		data, _ := o.get("data")
		t.attachText(data)
	case "content":
		content, _ := o.get("content")
		if jsonKind(content) == '"' {
			t.attachText(content)
			return
		}
		t.readContentBlocks(content)
	}
}

// readContentBlocks notes the text blocks of a content document or a search result, and the
// images of a content document.
func (t *anthropicTurn) readContentBlocks(v string) {
	var room stackElements
	items, e := asArray(room[:0], "", v)
	if e != nil {
		return
	}
	for _, it := range items {
		var mroom stackMembers
		o, e := asObject(mroom[:0], "", it)
		if e != nil {
			continue
		}
		switch typeOf(o) {
		case "text":
			text, _ := o.get("text")
			t.attachText(text)
		case "image":
			source, _ := o.get("source")
			t.readImageSource(source)
		}
	}
}

// attachText notes the JSON string v as a document's text; anything else adds nothing.
func (t *anthropicTurn) attachText(v string) {
	if s, e := asString("", v); e == nil && s != "" {
		a := t.req.attachments()
		a.Texts = append(a.Texts, s)
	}
}

// typeOf is the type member of a source or a block, "" when it has no string one.
func typeOf(o members[string]) string {
	v, _ := o.get("type")
	s, e := asString("", v)
	if e != nil {
		return ""
	}
	return s
}

// readImageSize is the size of the image whose base64 data is the JSON string v, read from its
// first bytes: zero when v is no string, or its data no image of a known format.
func readImageSize(v string) ImageSize {
	if jsonKind(v) != '"' {
		return ImageSize{}
	}
	return imageSize(base64.NewDecoder(base64.StdEncoding, &jsonStringReader{s: v, i: 1}))
}

var (
	pngMagic  = []byte("\x89PNG\r\n\x1a\n")
	jpegMagic = []byte("\xff\xd8")
	gifMagic  = []byte("GIF8")
)

// imageSize reads an image's size from the first imageHeaderBytes of data: the standard
// library's DecodeConfig for PNG, JPEG and GIF (which read the header and keep fixed-size
// state, however large the image says it is), and the first chunk's fields for WebP.
func imageSize(data io.Reader) ImageSize {
	r := bufio.NewReaderSize(io.LimitReader(data, imageHeaderBytes), 512)
	head, _ := r.Peek(30)
	var decodeConfig func(io.Reader) (image.Config, error)
	switch {
	case bytes.HasPrefix(head, pngMagic):
		decodeConfig = png.DecodeConfig
	case bytes.HasPrefix(head, jpegMagic):
		decodeConfig = jpeg.DecodeConfig
	case bytes.HasPrefix(head, gifMagic):
		decodeConfig = gif.DecodeConfig
	default:
		return webpSize(head)
	}
	c, err := decodeConfig(r)
	if err != nil || c.Width <= 0 || c.Height <= 0 {
		return ImageSize{}
	}
	return ImageSize{Width: c.Width, Height: c.Height}
}

// webpSize is the canvas size a WebP's first chunk states (the container's specification:
// VP8X for an extended file, VP8L lossless, VP8 lossy), zero when head is no WebP.
func webpSize(head []byte) ImageSize {
	if len(head) < 30 || string(head[:4]) != "RIFF" || string(head[8:12]) != "WEBP" {
		return ImageSize{}
	}
	var w, h int
	switch string(head[12:16]) {
	case "VP8X": // 24-bit width - 1 and height - 1
		w = 1 + (int(head[24]) | int(head[25])<<8 | int(head[26])<<16)
		h = 1 + (int(head[27]) | int(head[28])<<8 | int(head[29])<<16)
	case "VP8L": // a signature byte, then 14-bit width - 1 and height - 1
		if head[20] != 0x2f {
			return ImageSize{}
		}
		bits := binary.LittleEndian.Uint32(head[21:25])
		w, h = 1+int(bits&0x3fff), 1+int(bits>>14&0x3fff)
	case "VP8 ": // a frame tag, a start code, then 14-bit width and height
		if string(head[23:26]) != "\x9d\x01\x2a" {
			return ImageSize{}
		}
		w = int(binary.LittleEndian.Uint16(head[26:28]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(head[28:30]) & 0x3fff)
	}
	if w <= 0 || h <= 0 {
		return ImageSize{}
	}
	return ImageSize{Width: w, Height: h}
}

// jsonStringReader reads the text of the valid JSON string literal s from i (just past its
// opening quote), unescaping as it goes: a client may escape a base64 slash (\/), and only the
// bytes an image's header needs are read, where unquoting the whole string would copy it.
type jsonStringReader struct {
	s string
	i int
}

func (r *jsonStringReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"': // the closing quote: nothing more
			r.i = len(r.s)
			continue
		case c != '\\':
			r.i++
		case r.s[r.i+1] == 'u': // \uXXXX: base64 is ASCII, and anything else will not decode
			c = 0xff
			if x, ok := hex4(r.s[r.i+2 : r.i+6]); ok && x < 0x80 {
				c = byte(x)
			}
			r.i += 6
		default:
			c = unescapeByte(r.s[r.i+1])
			r.i += 2
		}
		p[n] = c
		n++
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// unescapeByte is the byte a JSON escape \c stands for.
func unescapeByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // " \ /
}

// hex4 is the value of four hex digits.
func hex4(s string) (rune, bool) {
	var x rune
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		x = x<<4 | rune(c)
	}
	return x, len(s) == 4
}
