package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeCodeMapNamesEveryPackage holds README.md's "A map of the code" to the tree: every
// directory with Go files — of the service's module and of the nested ones (deploy/test,
// deploy/helm/test, internal/clientcompat/gosdk) — is named, and every directory named exists. A
// nested directory may be named on its parent's line ("internal/clientcompat/ … gosdk/").
func TestReadmeCodeMapNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## A map of the code\n+```\n(.*?)\n```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no code block under \"## A map of the code\"")
	}
	entries := map[string]string{} // "internal/server" → the rest of its line
	for _, line := range strings.Split(string(m[1]), "\n") {
		path, rest, _ := strings.Cut(line, " ")
		if path = strings.TrimSuffix(path, "/"); path != "" {
			entries[path] = rest
		}
	}
	for path := range entries {
		if st, err := os.Stat(filepath.Join("../..", path)); err != nil || !st.IsDir() {
			t.Errorf("the code map names %s/, which is not a directory", path)
		}
	}

	var dirs []string
	err = filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != "../.." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") {
			rel, _ := filepath.Rel("../..", filepath.Dir(p))
			if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) && rel != "." {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 20 {
		t.Fatalf("found only %d directories with Go files: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		if !named(entries, dir) {
			t.Errorf("README.md's code map does not name %s/", dir)
		}
	}
}

// named reports whether the code map has a line for dir, or a line for one of its parents that
// names the rest of its path.
func named(entries map[string]string, dir string) bool {
	if _, ok := entries[dir]; ok {
		return true
	}
	for parent := dir; strings.Contains(parent, "/"); {
		parent = parent[:strings.LastIndex(parent, "/")]
		if rest, ok := entries[parent]; ok && strings.Contains(rest, strings.TrimPrefix(dir, parent+"/")+"/") {
			return true
		}
	}
	return false
}
