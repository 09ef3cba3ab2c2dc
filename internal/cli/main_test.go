package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/testbrood"
)

// testMainEnv makes the test binary act as brood: the CLI tests run brood as
// a real child process, and `brood demo` dispatches real subagent processes,
// by re-executing this binary with it set.
const testMainEnv = "BROOD_CLI_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, testMainEnv) }

// project is a temporary project directory (the working directory of the
// test) with a separate HOME.
type project struct {
	t    *testing.T
	root string
	home string
	env  map[string]string
}

func newProject(t *testing.T) *project {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	files := map[string]string{
		".brood/.keep":  "",
		"README.md":     "# Sample\nA sample project.\n",
		"main.go":       "package main\n\nfunc main() {}\n",
		"docs/guide.md": "# Guide\nRead me.\n",
	}
	for name, body := range files {
		writeFile(t, filepath.Join(root, name), body)
	}
	t.Chdir(root)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &project{t: t, root: root, home: home, env: map[string]string{"HOME": home, "BROOD_CHILD_EXE": exe}}
}

// script writes a script for the scripted model and returns its --model value.
func (p *project) script(name, yaml string) string {
	p.t.Helper()
	path := filepath.Join(p.root, ".brood", name)
	writeFile(p.t, path, yaml)
	return "script:" + path
}

// brood runs the CLI in-process.
func (p *project) brood(args ...string) (code int, stdout, stderr string) {
	p.t.Helper()
	var out, errb syncBuffer
	code = cli.Main(p.t.Context(), cli.IO{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: func(k string) string { return p.env[k] },
	}, args)
	return code, out.String(), errb.String()
}

// syncBuffer is a bytes.Buffer safe for concurrent writes, as the process's
// own stdout and stderr are: the dispatcher writes its [DISPATCH] lines to
// stderr from the goroutines of parallel Task calls.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
