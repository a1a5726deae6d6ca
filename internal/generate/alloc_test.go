package generate

import (
	"testing"
	"unsafe"

	"mockgateway/internal/protocol"
)

// The tests of this file and of alloc_norace_test.go hold the allocation work of issue 16 to
// what it claims; the benchmarks of generate_bench_test.go give its figures.

// TestGenerationStaysSmall: the generation is allocated for every answer, and above 512 bytes an
// allocation with pointers costs a type header to write (see generation.result).
func TestGenerationStaysSmall(t *testing.T) {
	if size := unsafe.Sizeof(generation{}); size > 512 {
		t.Errorf("generation is %d bytes, over 512", size)
	}
}

// TestPiecesHandOver: at its last use a builder's buffers become the pieces, not copied; with
// most of them idle, or before its last use, they are copied out.
func TestPiecesHandOver(t *testing.T) {
	fill := func(b *pieceBuilder) {
		b.add("one")
		b.add(" two")
	}
	var b pieceBuilder
	b.handOver = true
	b.reserve(7, 2)
	fill(&b)
	buf := unsafe.SliceData(b.buf)
	p := b.pieces()
	if unsafe.StringData(p.Text()) != buf || b.buf != nil || b.ends != nil {
		t.Errorf("last use: the text was copied, or the builder kept its buffers")
	}
	if p.Text() != "one two" || p.Len() != 2 || cap(p.ends) != 2 {
		t.Errorf("last use: got %q, %d pieces (cap %d)", p.Text(), p.Len(), cap(p.ends))
	}

	for _, tc := range []struct {
		name     string
		handOver bool
		reserve  int
	}{{"before its last use", false, 7}, {"mostly idle", true, 4096}} {
		b := pieceBuilder{handOver: tc.handOver}
		b.reserve(tc.reserve, 2)
		fill(&b)
		buf := unsafe.SliceData(b.buf)
		if p := b.pieces(); unsafe.StringData(p.Text()) == buf || p.Text() != "one two" || cap(p.ends) != 2 {
			t.Errorf("%s: the pieces share the builder's buffer, or differ: %q", tc.name, p.Text())
		}
	}
}

// TestAnswerOwnsItsText: a one-choice answer's text is the builder's buffer, and the choices of
// n > 1 each own theirs, exactly sized, however the shared builder grew.
func TestAnswerOwnsItsText(t *testing.T) {
	req := &protocol.Request{N: 3, Messages: userRequest("hi").Messages}
	res := Generate(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 300, Request: req})
	seen := map[*byte]bool{}
	for _, c := range res.Choices {
		data := unsafe.StringData(c.Content.Text())
		if seen[data] {
			t.Fatalf("choice %d shares another's text", c.Index)
		}
		seen[data] = true
	}
}

// TestSmallJSONBounds: the counts sizeChunks sizes the first chunks of small JSON by are upper
// bounds of what parsing it needs — values, object members, and members and array items
// together — so that the first chunks are all it allocates for values.
func TestSmallJSONBounds(t *testing.T) {
	docs := []string{`0`, `"x"`, `[]`, `{}`, `[[],[[]],{}]`, `{"a":[1,2,{"b":null}],"c":{"d":[true,false]}}`,
		`{"k":"a:b,c[d"}`, `["[",":",","]`, ` { "a" : [ 1 , 2 ] } `, `"\u005b\"\\"`}
	for _, sc := range schemaCases {
		docs = append(docs, sc.schema)
	}
	for _, doc := range docs {
		if len(doc) > smallJSON {
			continue
		}
		p := jsonParser{text: doc}
		p.sizeChunks()
		values, members := cap(p.chunk), cap(p.keyChunk)
		v, err := parseJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		var nv, nm, ni int
		var walk func(v *jvalue)
		walk = func(v *jvalue) {
			nv++
			nm += len(v.keys)
			ni += len(v.vals) + len(v.arr)
			for _, c := range v.vals {
				walk(c)
			}
			for _, c := range v.arr {
				walk(c)
			}
		}
		walk(v)
		if nv > values || nm > members || ni > values {
			t.Errorf("%.60s: %d values, %d members, %d members and items; sized for %d, %d", doc, nv, nm, ni, values, members)
		}
	}
}

// piecesMade is how many pieces the first choice of in makes before cutText cuts them, as its
// builder holds them (a result's own builder hands them over to the choice).
func piecesMade(in Input) int {
	g := newGeneration(in, in.Request, max(in.Request.N, 1))
	b, r := g.builder(false), new(rng)
	r.seedLater(&g.seed, 0)
	g.fullText(b, r)
	return len(b.ends)
}
