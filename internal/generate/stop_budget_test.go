package generate

import (
	"slices"
	"strings"
	"testing"
)

func TestStopAndBudget(t *testing.T) {
	full := chat(userRequest("cut me")).Choices[0]
	text := full.Text()
	// Pick stop strings from the uncut output, so the test knows where they occur.
	stopAt := func(k int) string { return strings.TrimSpace(full.Content.At(k))[:3] }

	tests := []struct {
		name       string
		stop       []string
		budget     int
		wantPieces int
		wantFinish string
	}{
		{"no cut", nil, 0, 40, "stop"},
		{"budget above length", nil, 100, 40, "stop"},
		{"budget equal to length", nil, 40, 40, "stop"},
		{"budget cuts", nil, 5, 5, "length"},
		{"stop cuts", []string{stopAt(10)}, 0, -1, "stop"},
		{"stop before budget", []string{stopAt(3)}, 20, -1, "stop"},
		{"budget before stop", []string{stopAt(30)}, 4, 4, "length"},
		{"empty stop ignored", []string{""}, 0, 40, "stop"},
		{"stop not found", []string{"§§"}, 0, 40, "stop"},
		{"stop at the start", []string{full.Content.At(0)[:2]}, 0, 0, "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := userRequest("cut me")
			req.Stop, req.MaxTokens = tt.stop, tt.budget
			c := chat(req).Choices[0]
			if c.FinishReason != tt.wantFinish {
				t.Errorf("finish = %s, want %s", c.FinishReason, tt.wantFinish)
			}
			if tt.wantPieces >= 0 && c.Content.Len() != tt.wantPieces {
				t.Errorf("%d pieces, want %d", c.Content.Len(), tt.wantPieces)
			}
			if c.Content.IsNil() {
				t.Error("Content is nil for a text choice")
			}
			// Cuts never change the words: the output is a prefix of the uncut one, piece by
			// piece (only the last piece may be shortened by a stop).
			got := c.Text()
			if !strings.HasPrefix(text, got) {
				t.Fatalf("%q is not a prefix of the uncut %q", got, text)
			}
			for k := range max(c.Content.Len()-1, 0) {
				if c.Content.At(k) != full.Content.At(k) {
					t.Fatalf("piece %d changed: %q vs %q", k, c.Content.At(k), full.Content.At(k))
				}
			}
			for _, s := range tt.stop {
				if s != "" && strings.Contains(got, s) {
					t.Errorf("output %q contains stop %q", got, s)
				}
			}
			if tt.budget > 0 && c.Content.Len() > tt.budget {
				t.Errorf("%d pieces exceed the budget %d", c.Content.Len(), tt.budget)
			}
		})
	}
}

func TestStopSpanningPieces(t *testing.T) {
	req := userRequest("hello brave new world")
	req.Stop = []string{"o b", "new"} // "o b" spans " hello" and " brave"; the earliest wins
	c := Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req}).Choices[0]
	if want := []string{"echo:", " hell"}; !slices.Equal(c.Content.Strings(), want) || c.FinishReason != "stop" {
		t.Fatalf("got %q %s, want %q stop", c.Content.Strings(), c.FinishReason, want)
	}
}

// TestBudgetGeneratesOnlyWhatItKeeps: a budget stops the generation at what cutText can keep,
// with the same answer — the whole answer cut, the same finish reason — as generating it whole
// and cutting it, including a stop string that crosses the budget.
func TestBudgetGeneratesOnlyWhatItKeeps(t *testing.T) {
	whole := Generate(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096, Request: userRequest("hi")})
	full := whole.Choices[0].Content
	for _, budget := range []int{1, 16, 100, 4095, 4096} {
		// No stop; a stop that starts at the budget's last piece and runs past it; one beyond.
		for _, stop := range []string{"", full.At(budget-1) + full.At(min(budget, full.Len()-1)), full.At(min(budget+5, full.Len()-1))} {
			req := userRequest("hi")
			req.MaxTokens = budget
			if stop != "" {
				req.Stop = []string{stop}
			}
			in := Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096, Request: req}
			got := newGeneration(in, req, 1).result(1).Choices[0]
			want, finish := newGeneration(in, req, 1).cutText(full)
			if !slices.Equal(got.Content.Strings(), want.Strings()) || got.FinishReason != finish {
				t.Errorf("budget %d stop %q: %d pieces %s, want %d %s", budget, stop, got.Content.Len(), got.FinishReason, want.Len(), finish)
			}
			if made := piecesMade(in); made > budget+len(stop)+1 {
				t.Errorf("budget %d stop %q: %d pieces made", budget, stop, made)
			}
		}
	}
}
