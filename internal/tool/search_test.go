package tool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// fixture builds a git repository with nested .gitignore files, negations
// and anchored patterns, giving every file a distinct modification time
// (later in the list = newer).
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	files := []struct{ path, content string }{
		{".gitignore", "*.log\nbuild/\n/top.txt\n!keep.log\n"},
		{"a.go", "package a\n\nfunc Alpha() {}\n"},
		{"keep.log", "kept log TODO\n"},
		{"x.log", "ignored log TODO\n"},
		{"top.txt", "ignored top TODO\n"},
		{"build/out.go", "package build // TODO\n"},
		{"docs/doc.md", "# Docs\nTODO write docs\n"},
		{".hidden/h.go", "package hidden // TODO\n"},
		{"other/a.tmp", "tmp outside sub TODO\n"},
		{"sub/.gitignore", "*.tmp\nsecret/\n"},
		{"sub/top.txt", "not anchored here TODO\n"},
		{"sub/a.tmp", "ignored tmp TODO\n"},
		{"sub/build/y.go", "package y // TODO\n"},
		{"sub/secret/s.go", "package secret // TODO\n"},
		{"sub/b.go", "package sub\n\n// TODO one\nfunc Beta() {\n\t// todo two\n}\n"},
		{"sub/deep/.gitignore", "!important.tmp\n"},
		{"sub/deep/important.tmp", "re-included TODO\n"},
		{"sub/deep/c.tmp", "ignored TODO\n"},
		{"bin/tool", "\x7fELF\x00\x00TODO"},
	}
	base := time.Now().Add(-time.Hour)
	for i, f := range files {
		p := filepath.Join(dir, f.path)
		writeFile(t, p, f.content)
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// gitVisible lists the files git itself considers not ignored, as absolute
// paths: the ground truth for our .gitignore handling.
func gitVisible(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var paths []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		paths = append(paths, filepath.Join(dir, l))
	}
	sort.Strings(paths)
	return paths
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestGlobMatchesGit(t *testing.T) {
	dir := fixture(t)
	res := run(t, &Glob{}, &Env{Dir: dir}, map[string]any{"pattern": "**/*"})
	if res.IsError {
		t.Fatal(res.Content)
	}
	got := lines(res.Content)
	sort.Strings(got)
	if want := gitVisible(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Glob **/* disagrees with git ls-files:\ngot  %q\nwant %q", got, want)
	}
}

func TestGlob(t *testing.T) {
	dir := fixture(t)
	env := &Env{Dir: dir}
	j := func(ps ...string) string {
		for i, p := range ps {
			ps[i] = filepath.Join(dir, p)
		}
		return strings.Join(ps, "\n")
	}
	tests := []struct {
		name    string
		in      map[string]any
		want    string
		wantErr bool
	}{
		{name: "newest first", in: map[string]any{"pattern": "**/*.go"}, want: j("sub/b.go", ".hidden/h.go", "a.go")},
		{name: "top level only", in: map[string]any{"pattern": "*.go"}, want: j("a.go")},
		{name: "under path", in: map[string]any{"pattern": "**/*.tmp", "path": "sub"}, want: j("sub/deep/important.tmp")},
		{name: "absolute pattern", in: map[string]any{"pattern": filepath.Join(dir, "sub", "*.go")}, want: j("sub/b.go")},
		{name: "braces", in: map[string]any{"pattern": "**/*.{md,log}"}, want: j("docs/doc.md", "keep.log")},
		{name: "no match", in: map[string]any{"pattern": "**/*.rs"}, want: `No files found matching "**/*.rs" in ` + dir},
		{name: "bad pattern", in: map[string]any{"pattern": "[a"}, wantErr: true},
		{name: "missing path", in: map[string]any{"pattern": "*", "path": "nope"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Glob{}, env, tt.in)
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Content)
			}
			if !tt.wantErr && res.Content != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", res.Content, tt.want)
			}
		})
	}
}

func TestGlobCapAndDeny(t *testing.T) {
	dir := t.TempDir()
	for i := range 105 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), "")
	}
	writeFile(t, filepath.Join(dir, "private", "p.txt"), "")
	res := run(t, &Glob{}, &Env{Dir: dir}, map[string]any{"pattern": "**/*.txt"})
	if got := lines(res.Content); len(got) != 101 || got[100] != "(6 more not shown; narrow the pattern or the path)" {
		t.Fatalf("%d lines, last %q", len(got), got[len(got)-1])
	}
	perms, _ := NewPermissions("default", nil, []string{"Read(private/**)"}, nil)
	res = run(t, &Glob{}, &Env{Dir: dir, Perms: perms}, map[string]any{"pattern": "private/*"})
	if !strings.HasPrefix(res.Content, "No files found") {
		t.Fatalf("a Read-denied file was listed: %q", res.Content)
	}
}

func TestGrep(t *testing.T) {
	dir := fixture(t)
	env := &Env{Dir: dir}
	p := func(s string) string { return filepath.Join(dir, s) }
	tests := []struct {
		name    string
		in      map[string]any
		want    []string // exact lines when wantErr is false
		wantErr bool
	}{
		{name: "files in path order, gitignore respected", in: map[string]any{"pattern": "TODO"},
			want: []string{p(".hidden/h.go"), p("docs/doc.md"), p("keep.log"), p("other/a.tmp"), p("sub/b.go"), p("sub/deep/important.tmp"), p("sub/top.txt")}},
		{name: "type filter", in: map[string]any{"pattern": "TODO", "type": "go"}, want: []string{p(".hidden/h.go"), p("sub/b.go")}},
		{name: "glob filter", in: map[string]any{"pattern": "TODO", "glob": "*.{md,tmp}"}, want: []string{p("docs/doc.md"), p("other/a.tmp"), p("sub/deep/important.tmp")}},
		{name: "glob list", in: map[string]any{"pattern": "TODO", "glob": "*.md *.log"}, want: []string{p("docs/doc.md"), p("keep.log")}},
		{name: "count", in: map[string]any{"pattern": "(?i)todo", "path": "sub", "output_mode": "count", "glob": "*.go"}, want: []string{p("sub/b.go") + ":2"}},
		{name: "case-insensitive content", in: map[string]any{"pattern": "todo", "-i": true, "path": "sub/b.go", "output_mode": "content"},
			want: []string{p("sub/b.go") + ":3:// TODO one", p("sub/b.go") + ":5:\t// todo two"}},
		{name: "context", in: map[string]any{"pattern": "^func", "path": "sub/b.go", "output_mode": "content", "-C": 1},
			want: []string{p("sub/b.go") + "-3-// TODO one", p("sub/b.go") + ":4:func Beta() {", p("sub/b.go") + "-5-\t// todo two"}},
		{name: "context groups separated", in: map[string]any{"pattern": "^package|^}", "path": "sub/b.go", "output_mode": "content", "-A": 1},
			want: []string{p("sub/b.go") + ":1:package sub", p("sub/b.go") + "-2-", "--", p("sub/b.go") + ":6:}"}},
		{name: "no line numbers", in: map[string]any{"pattern": "Alpha", "output_mode": "content", "-n": false}, want: []string{p("a.go") + ":func Alpha() {}"}},
		{name: "multiline", in: map[string]any{"pattern": `Beta\(\) \{.*?two`, "multiline": true, "output_mode": "content"},
			want: []string{p("sub/b.go") + ":4:func Beta() {", p("sub/b.go") + ":5:\t// todo two"}},
		{name: "single line without multiline", in: map[string]any{"pattern": `Beta\(\) \{.*two`}, want: []string{`No matches for "Beta\\(\\) \\{.*two" in ` + dir}},
		{name: "head limit", in: map[string]any{"pattern": "TODO", "head_limit": 2}, want: []string{p(".hidden/h.go"), p("docs/doc.md"), "(cut at head_limit 2; there are more results)"}},
		{name: "bad regexp", in: map[string]any{"pattern": "(?<=x)y"}, wantErr: true, want: []string{"RE2"}},
		{name: "bad type", in: map[string]any{"pattern": "x", "type": "cobol"}, wantErr: true, want: []string{"known types"}},
		{name: "bad mode", in: map[string]any{"pattern": "x", "output_mode": "json"}, wantErr: true, want: []string{"unknown output_mode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Grep{}, env, tt.in)
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Content)
			}
			if tt.wantErr {
				if !strings.Contains(res.Content, tt.want[0]) {
					t.Fatalf("%q does not contain %q", res.Content, tt.want[0])
				}
				return
			}
			if got := lines(res.Content); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", res.Content, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestGrepOutputCap(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.txt"), strings.Repeat("match me\n", 500))
	res := run(t, &Grep{}, &Env{Dir: dir, OutputLimit: 2000}, map[string]any{"pattern": "match", "output_mode": "content"})
	if len(res.Content) > 2300 || !strings.Contains(res.Content, "output cut at 2000 bytes") {
		t.Fatalf("%d bytes, tail %q", len(res.Content), res.Content[max(0, len(res.Content)-200):])
	}
}

func TestLS(t *testing.T) {
	dir := fixture(t)
	res := run(t, &LS{}, &Env{Dir: dir}, map[string]any{"path": "sub", "ignore": []string{"top.txt", "deep"}})
	want := strings.Join([]string{
		"- " + filepath.Join(dir, "sub") + "/",
		"  - .gitignore",
		"  - b.go",
	}, "\n")
	if res.IsError || res.Content != want {
		t.Fatalf("got\n%s\nwant\n%s", res.Content, want)
	}
	res = run(t, &LS{}, &Env{Dir: dir}, map[string]any{})
	for _, w := range []string{"\n  - .hidden/\n    - h.go\n", "\n  - sub/\n", "\n    - deep/\n      - .gitignore\n      - important.tmp"} {
		if !strings.Contains(res.Content, w) {
			t.Errorf("listing lacks %q:\n%s", w, res.Content)
		}
	}
	for _, no := range []string{".git/", "x.log", "build/", "secret/", "c.tmp"} {
		if strings.Contains(res.Content, no) {
			t.Errorf("listing shows ignored %q", no)
		}
	}
	if r := run(t, &LS{}, &Env{Dir: dir}, map[string]any{"path": "a.go"}); !r.IsError {
		t.Errorf("LS of a file: %q", r.Content)
	}

	many := t.TempDir()
	for i := range lsMaxEntries + 5 {
		writeFile(t, filepath.Join(many, fmt.Sprintf("f%04d", i)), "")
	}
	res = run(t, &LS{}, &Env{Dir: many}, map[string]any{})
	if got := lines(res.Content); len(got) != lsMaxEntries+2 || !strings.Contains(got[len(got)-1], "listing cut at 1000 entries") {
		t.Fatalf("%d lines, last %q", len(got), got[len(got)-1])
	}
}
