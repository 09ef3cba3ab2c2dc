package attack_test

import (
	"net/http"
	"os"
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
	url, file := p.serveMCPHTTP(mdl)
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

// TestMCPTokenFileHiddenFromChildren (review finding on case 5): `brood mcp
// --http --token-file FILE` with FILE outside ~/.config/brood/mcp; a child
// of another brood run of the same user, of every class, tries to read
// FILE (as it read the default token before). The server lists FILE in
// ~/.config/brood/mcp/token-files, and every dispatcher hides what is
// listed there from its children as it hides the directory.
func TestMCPTokenFileHiddenFromChildren(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# served\n"})
	mdl := p.script("s.yaml", "agents:\n  \"*\":\n    - say: explored\n")
	tokenFile := filepath.Join(t.TempDir(), "keys", "brood.token")
	_, file := p.serveMCPHTTP(mdl, "--token-file", tokenFile)
	if file != tokenFile {
		t.Fatalf("brood mcp --http keeps its token in %q, want %q", file, tokenFile)
	}
	tok, err := os.ReadFile(tokenFile)
	if err != nil || len(strings.TrimSpace(string(tok))) < 16 {
		t.Fatalf("token file: %q %v", tok, err)
	}
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
		"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
	steal := "cat " + tokenFile + " || echo REFUSED"
	run := p.script("steal.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: r, prompt: "r"}
        - Task: {subagent_type: general-purpose, description: w, prompt: "w"}
        - Task: {subagent_type: iso, description: i, prompt: "i"}
    - say: "root done"
  "*":
    - tools:
        - Bash: {command: "`+steal+`"}
    - say: "STOLE {{result 0}}"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", run, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	tasks := tasks0(p)
	if len(tasks) != 3 {
		t.Fatalf("want 3 children, have %d", len(tasks))
	}
	for _, tk := range tasks {
		if tk.Result == nil || !strings.Contains(tk.Result.Summary, "REFUSED") || strings.Contains(tk.Result.Summary, strings.TrimSpace(string(tok))) {
			t.Errorf("%s child read the server's --token-file: %+v", tk.Agent, tk.Result)
		}
	}
}
