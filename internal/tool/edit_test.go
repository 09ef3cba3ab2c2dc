package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	env := &Env{Dir: dir}

	res := run(t, &Write{}, env, map[string]any{"file_path": "a/b/c.txt", "content": "one\ntwo\n"})
	abs := filepath.Join(dir, "a/b/c.txt")
	if res.IsError || !strings.Contains(res.Content, "Created "+abs) || !strings.Contains(res.Content, "2 lines") {
		t.Fatalf("create: %q", res.Content)
	}
	if got, _ := os.ReadFile(abs); string(got) != "one\ntwo\n" {
		t.Fatalf("content = %q", got)
	}

	// An existing file keeps its mode; no temporary file is left behind.
	if err := os.Chmod(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	res = run(t, &Write{}, env, map[string]any{"file_path": abs, "content": "new"})
	if res.IsError || !strings.Contains(res.Content, "Overwrote") {
		t.Fatalf("overwrite: %q", res.Content)
	}
	info, err := os.Stat(abs)
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("mode after overwrite = %v, %v", info.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(abs))
	if len(entries) != 1 {
		t.Fatalf("leftover files: %v", entries)
	}

	// A symlink stays a symlink; its target changes.
	if err := os.Symlink(abs, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	run(t, &Write{}, env, map[string]any{"file_path": "link", "content": "via link"})
	if got, _ := os.ReadFile(abs); string(got) != "via link" {
		t.Fatalf("target content = %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "link")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced by a file")
	}

	res = run(t, &Write{}, env, map[string]any{"file_path": "a", "content": "x"})
	if !res.IsError || !strings.Contains(res.Content, "directory") {
		t.Fatalf("write over directory: %q", res.Content)
	}
}

func TestEdit(t *testing.T) {
	const src = "package x\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name    string
		file    string // initial content; "-" for no file
		in      map[string]any
		wantErr bool
		want    []string
		after   string // expected content; "" to skip
	}{
		{name: "unique", file: src, in: map[string]any{"old_string": "func a() {\n\treturn 1", "new_string": "func a() {\n\treturn 2"},
			want: []string{"replaced 1 occurrence", "     4\t\treturn 2"}, after: strings.Replace(src, "return 1", "return 2", 1)},
		{name: "zero matches", file: src, in: map[string]any{"old_string": "return 3", "new_string": "x"}, wantErr: true, want: []string{"old_string was not found", "Read the file again"}},
		{name: "matches modulo whitespace", file: src, in: map[string]any{"old_string": "func b() {\n    return 1\n}", "new_string": "x"}, wantErr: true, want: []string{"does match at line 7 if whitespace is ignored"}},
		{name: "many matches", file: src, in: map[string]any{"old_string": "\treturn 1", "new_string": "\treturn 9"}, wantErr: true, want: []string{"occurs 2 times", "lines 4, 8", "replace_all"}, after: src},
		{name: "replace all", file: src, in: map[string]any{"old_string": "return 1", "new_string": "return 9", "replace_all": true}, want: []string{"replaced 2 occurrences"}, after: strings.ReplaceAll(src, "return 1", "return 9")},
		{name: "same strings", file: src, in: map[string]any{"old_string": "a", "new_string": "a"}, wantErr: true, want: []string{"are the same"}},
		{name: "missing file", file: "-", in: map[string]any{"old_string": "a", "new_string": "b"}, wantErr: true, want: []string{"does not exist", "use Write"}},
		{name: "create with empty old", file: "-", in: map[string]any{"old_string": "", "new_string": "hello\n"}, want: []string{"Created"}, after: "hello\n"},
		{name: "empty old on full file", file: src, in: map[string]any{"old_string": "", "new_string": "x"}, wantErr: true, want: []string{"old_string is empty"}},
		{name: "crlf file", file: "a\r\nb\r\nc\r\n", in: map[string]any{"old_string": "a\nb", "new_string": "A\nB"}, after: "A\r\nB\r\nc\r\n"},
		{name: "binary file", file: "x\x00y", in: map[string]any{"old_string": "x", "new_string": "z"}, wantErr: true, want: []string{"binary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.go")
			if tt.file != "-" {
				writeFile(t, path, tt.file)
			}
			tt.in["file_path"] = "f.go"
			res := run(t, &Edit{}, &Env{Dir: dir}, tt.in)
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result %q does not contain %q", res.Content, w)
				}
			}
			if tt.after != "" {
				got, _ := os.ReadFile(path)
				if string(got) != tt.after {
					t.Errorf("file now %q, want %q", got, tt.after)
				}
			}
		})
	}
}
