package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/png"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// jpegWithMetadata is a JPEG's start: SOI, segments APP1 segments of the largest size, then a
// baseline SOF declaring 640×480 and the start of a scan, and no more.
func jpegWithMetadata(segments int) []byte {
	b := []byte{0xff, 0xd8}
	for range segments {
		b = append(b, 0xff, 0xe1, 0xff, 0xff)
		b = append(b, make([]byte, 0xffff-2)...)
	}
	b = append(b, 0xff, 0xc0, 0, 11, 8)
	b = binary.BigEndian.AppendUint16(b, 480)
	b = binary.BigEndian.AppendUint16(b, 640)
	return append(b, 1, 1, 0x11, 0, 0xff, 0xda, 0, 8)
}

// countingReader counts what is read of it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestImageSizeReadsABoundedPrefix: an image's size is read from its first imageHeaderBytes and
// no further, whatever follows: a JPEG whose size comes after its metadata is read, one whose
// metadata runs past the bound counts as of unknown size, and neither is read beyond it.
func TestImageSizeReadsABoundedPrefix(t *testing.T) {
	for _, tc := range []struct {
		name     string
		segments int
		want     ImageSize
	}{
		{"size after two metadata segments", 2, ImageSize{640, 480}},
		{"size past the bound", 64, ImageSize{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := &countingReader{r: bytes.NewReader(jpegWithMetadata(tc.segments))}
			if got := imageSize(data); got != tc.want {
				t.Errorf("size %v, want %v", got, tc.want)
			}
			if data.n > imageHeaderBytes {
				t.Errorf("read %d bytes of the image, more than %d", data.n, imageHeaderBytes)
			}
		})
	}
}

// TestReadImageSizeAllocation: reading an image's size allocates what the decoders keep, not a
// share of the data: a four-megabyte image, with or without escapes in its JSON string, costs
// what a header alone costs, within a bound far below its size.
func TestReadImageSizeAllocation(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 150, 100))); err != nil {
		t.Fatal(err)
	}
	head := base64.StdEncoding.EncodeToString(buf.Bytes())
	filler := strings.Repeat("AAAA", 1<<20)
	jpeg := base64.StdEncoding.EncodeToString(jpegWithMetadata(64))
	for _, tc := range []struct {
		name, data string
		want       ImageSize
	}{
		{"png", head + filler, ImageSize{150, 100}},
		{"png, escaped", `\u0069` + head[1:] + strings.Repeat(`\/\/\/\/`, 1<<20), ImageSize{150, 100}},
		{"jpeg read to the bound", jpeg, ImageSize{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := `"` + tc.data + `"`
			if got := readImageSize(v); got != tc.want {
				t.Fatalf("size %v, want %v", got, tc.want)
			}
			const runs = 20
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range runs {
				readImageSize(v)
			}
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / runs
			if per > 64<<10 {
				t.Errorf("%d bytes allocated a call, for %d bytes of data", per, len(v))
			}
			t.Logf("%d bytes allocated a call, for %d bytes of data", per, len(v))
		})
	}
}

// TestWebPSize: the three kinds of WebP state their size in their first chunk.
func TestWebPSize(t *testing.T) {
	riff := func(chunk string, body ...byte) []byte {
		b := append([]byte("RIFF\x00\x00\x00\x00WEBP"+chunk+"\x00\x00\x00\x00"), body...)
		return append(b, make([]byte, 30)...)[:30]
	}
	// VP8L: 0x2f, then width-1 (14 bits) and height-1 (14 bits), little-endian.
	bits := binary.LittleEndian.AppendUint32(nil, uint32(299)|uint32(99)<<14)
	for _, tc := range []struct {
		name string
		head []byte
		want ImageSize
	}{
		{"VP8X", riff("VP8X", 0, 0, 0, 0, 0x2b, 0x01, 0, 0x63, 0, 0), ImageSize{300, 100}},
		{"VP8L", riff("VP8L", slices.Concat([]byte{0x2f}, bits)...), ImageSize{300, 100}},
		{"VP8", riff("VP8 ", 0, 0, 0, 0x9d, 0x01, 0x2a, 0x2c, 0x01, 0x64, 0x00), ImageSize{300, 100}},
		{"VP8 without its start code", riff("VP8 ", 0, 0, 0, 0, 0, 0, 0x2c, 0x01, 0x64, 0x00), ImageSize{}},
		{"short", []byte("RIFF\x00\x00\x00\x00WEBPVP8X"), ImageSize{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := imageSize(bytes.NewReader(tc.head)); got != tc.want {
				t.Fatalf("size %v, want %v", got, tc.want)
			}
		})
	}
}
