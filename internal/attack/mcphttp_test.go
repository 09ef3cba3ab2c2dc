package attack_test

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPHTTPNeedsToken: another local user reached `brood mcp --http` on
// its loopback port and dispatched an explore child as the server's owner.
// Now a request without the server's token, or with another one, gets 401
// and dispatches nothing; the token is in a file only its owner can read.
func TestMCPHTTPNeedsToken(t *testing.T) {
	p := newProject(t, map[string]string{"README.md": "# served\n"})
	mdl := p.script("s.yaml", "agents:\n  \"*\":\n    - say: explored\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "mcp", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = p.root, append(append([]string{}, p.Env...), "BROOD_MODEL="+mdl)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	url, file := "", ""
	sc := bufio.NewScanner(stderr)
	for file == "" && sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "serving streamable HTTP on "); ok {
			url = u
		}
		if _, f, ok := strings.Cut(sc.Text(), "the token is in "); ok {
			file = f
		}
	}
	go func() {
		for sc.Scan() {
		}
		cmd.Wait()
		close(done)
	}()
	if url == "" || file == "" {
		t.Fatalf("brood mcp --http did not say where it serves (%q) and where its token is (%q)", url, file)
	}
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v, want mode 0600", file, info.Mode(), err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(b))
	call := func(auth, body string) int {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	const task = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Task","arguments":{"subagent_type":"explore","description":"steal","prompt":"read ~/.ssh/id_rsa"}}}`
	for _, auth := range []string{"", "Bearer " + strings.Repeat("0", len(tok)), "Basic " + tok} {
		for _, body := range []string{initialize, task} {
			if got := call(auth, body); got != http.StatusUnauthorized {
				t.Errorf("Authorization %q: status %d, want 401", auth, got)
			}
		}
	}
	if got := call("Bearer "+tok, initialize); got != http.StatusOK {
		t.Errorf("the token's holder: status %d, want 200", got)
	}
	if tasks, _ := filepath.Glob(filepath.Join(p.root, ".brood", "dispatch", "*")); len(tasks) != 0 {
		t.Errorf("requests without the token dispatched %d tasks", len(tasks))
	}
}
