package tool

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// TestDotenvFilesUnlistableRoot: a project root that can be entered but
// not listed still has its .env found by name (an agent can read it by
// name), as the globs found it. File modes bind only a user other than
// root: run as root, the test runs itself again as nobody.
func TestDotenvFilesUnlistableRoot(t *testing.T) {
	if os.Getuid() == 0 {
		asNobody(t, "TestDotenvFilesUnlistableRoot")
		return
	}
	root := filepath.Join(t.TempDir(), "p")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("API_TOKEN=abcdefgh12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o311); err != nil { // searchable, not listable
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(root, 0o755) })
	if _, err := os.ReadDir(root); err == nil {
		t.Fatal("the root could be listed: the test shows nothing")
	}
	if got, want := dotenvFiles(root), []string{filepath.Join(root, ".env")}; !slices.Equal(got, want) {
		t.Fatalf("dotenvFiles = %q, want %q", got, want)
	}
}

// asNobody runs the test binary's test named test again as uid/gid 65534,
// from a copy of the binary nobody can run, and fails with its output if it fails.
func asNobody(t *testing.T, test string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "brood-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^"+test+"$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+os.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") || strings.Contains(string(out), "no tests to run") {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
}
