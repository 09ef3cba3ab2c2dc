package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run calls a tool directly with a JSON input built from v.
func run(t *testing.T, tl Tool, env *Env, v any) Result {
	t.Helper()
	in, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Run(context.Background(), env, in)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	env := &Env{Dir: dir}
	writeFile(t, filepath.Join(dir, "small.txt"), "alpha\nbeta\r\ngamma")
	writeFile(t, filepath.Join(dir, "many.txt"), numbered(1, 2500))
	writeFile(t, filepath.Join(dir, "long.txt"), "short\n"+strings.Repeat("é", 2500)+"\n")
	writeFile(t, filepath.Join(dir, "big.txt"), strings.Repeat("x", 300*1024))
	writeFile(t, filepath.Join(dir, "bin.dat"), "ELF\x00\x01\x02")
	writeFile(t, filepath.Join(dir, "empty.txt"), "")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      map[string]any
		wantErr bool
		want    []string
		notWant []string
	}{
		{name: "whole small file", in: map[string]any{"file_path": "small.txt"}, want: []string{"     1\talpha\n     2\tbeta\n     3\tgamma\n"}, notWant: []string{"\r", "showing lines"}},
		{name: "absolute path", in: map[string]any{"file_path": filepath.Join(dir, "small.txt")}, want: []string{"     2\tbeta"}},
		{name: "range", in: map[string]any{"file_path": "many.txt", "offset": 10, "limit": 3}, want: []string{"    10\tline 10\n    11\tline 11\n    12\tline 12\n", "showing lines 10-12", "offset=13"}, notWant: []string{"line 9\n", "line 13\n"}},
		{name: "default limit 2000 lines", in: map[string]any{"file_path": "many.txt"}, want: []string{"  2000\tline 2000\n", "showing lines 1-2000", "offset=2001"}, notWant: []string{"line 2001\n"}},
		{name: "offset to the end", in: map[string]any{"file_path": "many.txt", "offset": 2499}, want: []string{"  2500\tline 2500"}, notWant: []string{"showing lines"}},
		{name: "offset past end", in: map[string]any{"file_path": "small.txt", "offset": 10}, wantErr: true, want: []string{"has 3 lines; offset 10 is past the end"}},
		{name: "long line cut", in: map[string]any{"file_path": "long.txt"}, want: []string{"[line cut at 2000 characters]", "1 long lines were cut", strings.Repeat("é", 2000) + "..."}, notWant: []string{strings.Repeat("é", 2001)}},
		{name: "too large without range", in: map[string]any{"file_path": "big.txt"}, wantErr: true, want: []string{"too large to read at once", "pass offset and limit"}},
		{name: "too large with range", in: map[string]any{"file_path": "big.txt", "offset": 1, "limit": 1}, want: []string{"     1\txxx", "[line cut"}},
		{name: "binary", in: map[string]any{"file_path": "bin.dat"}, wantErr: true, want: []string{"binary file"}},
		{name: "empty", in: map[string]any{"file_path": "empty.txt"}, want: []string{"exists but is empty"}},
		{name: "directory", in: map[string]any{"file_path": "sub"}, wantErr: true, want: []string{"is a directory", "LS"}},
		{name: "missing", in: map[string]any{"file_path": "nope.txt"}, wantErr: true, want: []string{"does not exist: " + filepath.Join(dir, "nope.txt")}},
		{name: "negative offset", in: map[string]any{"file_path": "small.txt", "offset": -1}, wantErr: true, want: []string{"must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Read{}, env, tt.in)
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v; content:\n%s", res.IsError, firstLines(res.Content, 5))
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result does not contain %q:\n%s", w, firstLines(res.Content, 5))
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(res.Content, w) {
					t.Errorf("result contains %q", w)
				}
			}
		})
	}
}
