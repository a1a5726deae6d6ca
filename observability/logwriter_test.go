package observability

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// TestLogWriterKeepsEveryLineWhole: many writers at once, every line arrives once and intact, in
// each writer's order, and Close flushes the rest.
func TestLogWriterKeepsEveryLineWhole(t *testing.T) {
	out := &testutil.SyncBuffer{}
	lw := NewLogWriter(out)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(lw, "writer %d line %d %s\n", g, i, strings.Repeat("x", i%300))
			}
		}(g)
	}
	wg.Wait()
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = lw.Write([]byte("after close\n"))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*2000+1 || lines[len(lines)-1] != "after close" {
		t.Fatalf("%d lines", len(lines))
	}
	next := map[int]int{}
	for _, l := range lines[:len(lines)-1] {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(l, "writer %d line %d %s", &g, &i, &pad); err != nil && i%300 != 0 {
			t.Fatalf("torn line %q: %v", l, err)
		}
		if i != next[g] || (i%300 != 0 && len(pad) != i%300) {
			t.Fatalf("writer %d: line %d out of order or torn (want %d): %q", g, i, next[g], l)
		}
		next[g]++
	}
}

// TestLogWriterFlushesWithoutClose: lines written in bursts, by many writers at once, all go
// out within the gathering delay, no Close needed — only the first line into an empty batch
// wakes the writer goroutine, and none is left waiting for a wake that does not come.
func TestLogWriterFlushesWithoutClose(t *testing.T) {
	out := &testutil.SyncBuffer{}
	lw := NewLogWriter(out)
	defer lw.Close()
	want := 0
	for burst := range 50 {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range burst % 7 {
					fmt.Fprintf(lw, "burst %d writer %d line %d\n", burst, g, i)
				}
			})
		}
		wg.Wait()
		want += 4 * (burst % 7)
		deadline := time.Now().Add(2 * time.Second)
		for strings.Count(out.String(), "\n") != want {
			if time.Now().After(deadline) {
				t.Fatalf("burst %d: %d lines out, want %d", burst, strings.Count(out.String(), "\n"), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestLogWriterEchoesAllButAccessLines: with a second sink (stderr beside --log-file), the first
// gets every line and the echo every line but the access lines, each in order — and those too
// when asked.
func TestLogWriterEchoesAllButAccessLines(t *testing.T) {
	for _, echoAccess := range []bool{false, true} {
		out, echo := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
		lw := newLogWriter(out, echo, echoAccess)
		var all, echoed strings.Builder
		for i := range 3000 {
			line := fmt.Sprintf("line %d\n", i)
			all.WriteString(line)
			if i%3 == 0 {
				fmt.Fprint(lw, line)
				echoed.WriteString(line)
			} else {
				fmt.Fprint(lw.AccessLines(), line)
				if echoAccess {
					echoed.WriteString(line)
				}
			}
		}
		_ = lw.Close()
		if out.String() != all.String() || echo.String() != echoed.String() {
			t.Errorf("echo access %v: %d bytes out (want %d), %d echoed (want %d)", echoAccess,
				len(out.String()), all.Len(), len(echo.String()), echoed.Len())
		}
	}
}
