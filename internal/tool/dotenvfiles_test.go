package tool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDotenvFiles: the .env files the redactor reads are what the globs
// .env, .env.*, */.env and */.env.* match, in their order, whatever sits
// at the top of the project (files, directories, links to either, hidden
// ones), and nothing deeper.
func TestDotenvFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string          // created with some content
		links map[string]string // link name → target, relative to root
	}{
		{"none", []string{"README.md"}, nil},
		{"top only", []string{".env", ".env.local", ".env.example", "main.go"}, nil},
		{"below", []string{"a/.env", "a/.env.prod", "a/sub/.env", "b/x", ".git/.env.x", "c"}, nil},
		{"links", []string{"a/.env", "a/.env.test", "c"}, map[string]string{"d": "a", "e": "c", "f": "missing"}},
		{"a directory named like a file", []string{".env.d/x", ".env/y", "z/.env/w"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "p[1]") // a pattern character in the path
			for _, f := range tc.files {
				p := filepath.Join(root, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("K=v\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
					t.Fatal(err)
				}
			}
			var want []string
			for _, pat := range []string{".env", ".env.*", "*/.env", "*/.env.*"} {
				m, err := filepath.Glob(filepath.Join(globEscape(root), pat))
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, m...)
			}
			if got := dotenvFiles(root); !slices.Equal(got, want) {
				t.Fatalf("dotenvFiles = %q, the globs %q", got, want)
			}
		})
	}
}

// globEscape is path as a glob pattern matching only itself.
func globEscape(path string) string {
	return strings.NewReplacer(`\\`, `\\\\`, "[", "[[]", "*", "[*]", "?", "[?]").Replace(path)
}
