package server

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"mockgateway/internal/catalog"
)

// encodedImage is an image of w×h pixels in format, base64 as a client sends it.
func encodedImage(t *testing.T, format string, w, h int) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// pngHeader is the start of a PNG that declares w×h pixels: the signature and a valid IHDR
// chunk, and nothing after it.
func pngHeader(w, h uint32) string {
	chunk := binary.BigEndian.AppendUint32([]byte("IHDR"), w)
	chunk = binary.BigEndian.AppendUint32(chunk, h)
	chunk = append(chunk, 8, 0, 0, 0, 0) // 8-bit gray, no interlace
	b := append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13)
	b = append(b, chunk...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
	return base64.StdEncoding.EncodeToString(b)
}

// webpHeader is the start of an extended WebP (a VP8X chunk) whose canvas is w×h pixels.
func webpHeader(w, h uint32) string {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00")
	b = append(b, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	return base64.StdEncoding.EncodeToString(b)
}

func imageBlock(data string) string {
	return `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}`
}

// inputTokens is the input_tokens of the answer to a Messages request whose one user turn holds
// the blocks, and fails unless count_tokens gives the same number.
func inputTokens(t *testing.T, h *harness, blocks string) int {
	t.Helper()
	conv := `"messages":[{"role":"user","content":[{"type":"text","text":"Look."}` + blocks + `]}]`
	rr := h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":16,`+conv+`}`)
	if rr.Code != http.StatusOK {
		t.Fatalf("answer %d: %s", rr.Code, rr.Body)
	}
	answer, _ := decodeMessage(t, rr.Body.Bytes()).Usage["input_tokens"].(float64)
	rr = h.anthropic(messagesPath+"/count_tokens", `{"model":"mock-chat",`+conv+`}`)
	var n struct {
		InputTokens float64 `json:"input_tokens"`
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &n); err != nil || n.InputTokens != answer {
		t.Fatalf("count_tokens %d %s, the answer's usage %v", rr.Code, rr.Body, answer)
	}
	return int(answer)
}

// TestMessagesMediaTokens: images, documents and search results are counted in the answer's
// input_tokens and in count_tokens alike, by the rule docs/protocol.md gives: an image
// width × height / 750 once its long edge is at most 1568, at most 1,600, and 1,600 when its
// size is not known; a PDF 3,000 per started 50,000 bytes; a document's or a search result's
// text as text.
func TestMessagesMediaTokens(t *testing.T) {
	h := newHarness(t)
	base := inputTokens(t, h, "")
	textDoc := `{"type":"document","title":"T","source":{"type":"text","media_type":"text/plain","data":"Hello there, world"}}`
	cases := []struct {
		name, blocks string
		want         int
	}{
		{"png 150×100", "," + imageBlock(encodedImage(t, "png", 150, 100)), 20},
		{"jpeg 75×40", "," + imageBlock(encodedImage(t, "jpeg", 75, 40)), 4},
		{"gif 30×25", "," + imageBlock(encodedImage(t, "gif", 30, 25)), 1},
		{"webp 300×100", "," + imageBlock(webpHeader(300, 100)), 40},
		{"long edge scaled to 1568", "," + imageBlock(encodedImage(t, "png", 3000, 200)), 218},
		{"a huge declared size is capped", "," + imageBlock(pngHeader(100000, 100000)), 1600},
		{"the header alone is enough", "," + imageBlock(pngHeader(150, 100)), 20},
		{"escapes are read through", "," + imageBlock(`\u0069`+pngHeader(150, 100)[1:]), 20},
		{"not an image falls back", "," + imageBlock(base64.StdEncoding.EncodeToString([]byte("not an image at all"))), 1600},
		{"not base64 falls back", "," + imageBlock("%%%%"), 1600},
		{"a broken png falls back", "," + imageBlock(pngHeader(150, 100)[:20]), 1600},
		{"url image", `,{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}`, 1600},
		{"file image", `,{"type":"image","source":{"type":"file","file_id":"file_011"}}`, 1600},
		{"two images", "," + imageBlock(encodedImage(t, "png", 150, 100)) + "," + imageBlock(encodedImage(t, "jpeg", 75, 40)), 24},
		{"an image in a tool result", "", 20},
		{"text document", "," + textDoc, 6},
		{"content document", `,{"type":"document","source":{"type":"content","content":[{"type":"text","text":"one two"},{"type":"text","text":"three"},` + imageBlock(pngHeader(150, 100)) + `]}}`, 24},
		{"content document, a string", `,{"type":"document","source":{"type":"content","content":"abcde"}}`, 2},
		{"search result", `,{"type":"search_result","source":"https://example.com","title":"T","content":[{"type":"text","text":"alpha beta"}]}`, 3},
		{"pdf", `,{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQK"}}`, 3000},
		{"pdf of two pages' bytes", `,{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + strings.Repeat("A", 80000) + `"}}`, 6000},
		{"url pdf", `,{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}}`, 3000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			if tc.name == "an image in a tool result" {
				got = toolResultImageTokens(t, h, imageBlock(encodedImage(t, "png", 150, 100)))
			} else {
				got = inputTokens(t, h, tc.blocks) - base
			}
			if got != tc.want {
				t.Fatalf("the blocks count %d tokens, want %d", got, tc.want)
			}
		})
	}
}

// toolResultImageTokens is what an image adds to a tool result, as Claude Code's Read sends a
// screenshot back.
func toolResultImageTokens(t *testing.T, h *harness, image string) int {
	t.Helper()
	count := func(content string) float64 {
		body := `{"model":"mock-chat","messages":[{"role":"user","content":"shot"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` + content + `]}]}]}`
		rr := h.anthropic(messagesPath+"/count_tokens", body)
		var n struct {
			InputTokens float64 `json:"input_tokens"`
		}
		if err := json.Unmarshal(rr.Body.Bytes(), &n); err != nil || rr.Code != http.StatusOK {
			t.Fatalf("count_tokens %d %s", rr.Code, rr.Body)
		}
		return n.InputTokens
	}
	return int(count(`{"type":"text","text":"x"},`+image) - count(`{"type":"text","text":"x"}`))
}

// TestMessagesMediaContextWindow: images count in the context-window check as in usage.
func TestMessagesMediaContextWindow(t *testing.T) {
	cat, err := catalog.Parse([]byte(`models:
  - id: mock-small
    kind: mock
    behavior: chat
    context_window: 2000
    capabilities: {streaming: true, tools: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) { d.Catalog = cat })
	url := `{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}`
	body := func(images ...string) string {
		return `{"model":"mock-small","max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":"Look."},` + strings.Join(images, ",") + `]}]}`
	}
	if rr := h.anthropic(messagesPath, body(url)); rr.Code != http.StatusOK {
		t.Fatalf("one image: %d %s", rr.Code, rr.Body)
	}
	rr := h.anthropic(messagesPath, body(url, url))
	if rr.Code != http.StatusBadRequest || !strings.Contains(rr.Body.String(), "maximum context length is 2000 tokens") {
		t.Fatalf("two images: %d %s", rr.Code, rr.Body)
	}
}
