package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeAgentLoop writes the scripted tool loop the coding-agent tests run an agent through: a
// working directory (work) whose notes.txt holds a secret word, and a directory of strict
// fixtures (fixtures) in which mock-tools, asked about notes.txt, calls tool on that file (its
// path in the argument file_path) and, once the file's content came back in the tool's result,
// answers with the word. With more, the fixtures also script a plain answer from mock-chat
// ("Say hello") and the same loop on mock-reasoning, its reasoning sent along.
func writeAgentLoop(t *testing.T, tool string, more bool) (work, fixtures string) {
	t.Helper()
	work, fixtures = t.TempDir(), t.TempDir()
	notes := filepath.Join(work, "notes.txt")
	if err := os.WriteFile(notes, []byte("The secret word is PAPAYA.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"file_path": notes})
	call, _ := json.Marshal([]map[string]any{{"name": tool, "arguments": json.RawMessage(args)}})
	loop := func(prefix, model, reasoning string) string {
		return `{"name": "` + prefix + `read-notes", "match": {"model": "` + model + `", "last_user": {"contains": "notes.txt"}, "tools": ["` + tool + `"], "turn": 1},
	   "reply": {"tool_calls": ` + string(call) + reasoning + `}},
	  {"name": "` + prefix + `answer-after-read", "match": {"model": "` + model + `", "tool_result": "` + tool + `", "any_message": {"contains": "PAPAYA"}, "turn": 2},
	   "reply": {"content": "The secret word is PAPAYA."}}`
	}
	fs := []string{loop("", "mock-tools", "")}
	if more {
		fs = []string{`{"name": "hello", "match": {"model": "mock-chat", "last_user": {"contains": "Say hello"}, "turn": 1},
	   "reply": {"content": "Hello from the mock."}}`, fs[0],
			loop("think-", "mock-reasoning", `, "reasoning": {"summary": "The answer is in notes.txt: read it."}`)}
	}
	file := `{"strict": true, "fixtures": [` + strings.Join(fs, ",\n  ") + `]}`
	if err := os.WriteFile(filepath.Join(fixtures, "agent-loop.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	return work, fixtures
}
