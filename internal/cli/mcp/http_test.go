package mcp_test

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer is a running `brood mcp --http` and what it said on stderr.
type httpServer struct {
	cmd       *exec.Cmd
	url       string
	tokenFile string // "" when the token came from the environment
	done      chan struct{}
}

// startHTTP starts brood mcp --http 127.0.0.1:0 with more args and reads
// where it serves and where its token is.
func startHTTP(t *testing.T, root string, env []string, args ...string) *httpServer {
	t.Helper()
	cmd := brood(t, root, env, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	s := &httpServer{cmd: cmd, done: make(chan struct{})}
	t.Cleanup(func() { cmd.Process.Kill(); <-s.done })
	sc := bufio.NewScanner(stderr)
	for s.url == "" || !strings.Contains(sc.Text(), "Authorization: Bearer") {
		if !sc.Scan() {
			t.Fatalf("brood mcp --http ended before saying where it serves and where its token is (url %q)", s.url)
		}
		if _, u, ok := strings.Cut(sc.Text(), "serving streamable HTTP on "); ok {
			s.url = u
		}
		if _, f, ok := strings.Cut(sc.Text(), "the token is in "); ok {
			s.tokenFile = f
		}
	}
	go func() {
		for sc.Scan() {
		}
		cmd.Wait()
		close(s.done)
	}()
	return s
}

// post sends an MCP initialize request with an Authorization header (none
// when auth is "") and returns the status.
func post(t *testing.T, url, host, auth string) int {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	must(t, err)
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// bearerTransport adds the token to every request of an MCP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	must(t, err)
	return cs
}

func readToken(t *testing.T, path string) string {
	t.Helper()
	info, err := os.Stat(path)
	must(t, err)
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("token file %s has mode %04o, want 0600", path, perm)
	}
	b, err := os.ReadFile(path)
	must(t, err)
	return strings.TrimSpace(string(b))
}

// TestHTTPNeedsToken: brood mcp --http generates a token per start, written
// 0600 under the user's config directory; a request without it, or with
// another, gets 401 and starts nothing; the token's holder delegates; a
// DNS-rebinding Host is still refused (403) even with the token; the
// token file goes away with the server.
func TestHTTPNeedsToken(t *testing.T) {
	root, env := project(t)
	s := startHTTP(t, root, env)
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if !strings.HasPrefix(s.tokenFile, filepath.Join(home, ".config", "brood", "mcp")+"/") {
		t.Fatalf("token file %q, want it under ~/.config/brood/mcp", s.tokenFile)
	}
	tok := readToken(t, s.tokenFile)
	if len(tok) < 32 {
		t.Fatalf("token %q is too short", tok)
	}
	for _, auth := range []string{"", "Bearer wrong-token-wrong-token-wrong", "Basic " + tok, "Bearer " + tok[:len(tok)-1]} {
		if got := post(t, s.url, "", auth); got != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, got)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	if _, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url}, nil); err == nil {
		t.Error("an MCP client without the token connected")
	}
	cs := connectHTTP(t, s.url, tok)
	delegate(t, cs)
	must(t, cs.Close())
	logs, _ := filepath.Glob(filepath.Join(root, ".brood", "dispatch", "*", "result.json"))
	if len(logs) != 1 {
		t.Errorf("%d dispatches, want only the token holder's one", len(logs))
	}
	// DNS rebinding: a page on another name resolving to 127.0.0.1.
	if got := post(t, s.url, "evil.example:80", "Bearer "+tok); got != http.StatusForbidden {
		t.Errorf("a request with Host evil.example got %d, want 403", got)
	}
	must(t, s.cmd.Process.Signal(syscall.SIGTERM))
	<-s.done
	if _, err := os.Stat(s.tokenFile); err == nil {
		t.Errorf("the per-start token file %s outlived the server", s.tokenFile)
	}
}

// TestHTTPTokenFile: --token-file that does not exist gets a new token,
// 0600, kept; the next start reads it (a client configured once keeps
// working); a token file others may read is refused; BROOD_MCP_TOKEN gives
// the token; --token-file needs --http.
func TestHTTPTokenFile(t *testing.T) {
	root, env := project(t)
	file := filepath.Join(t.TempDir(), "sub", "brood.token")
	s := startHTTP(t, root, env, "--token-file", file)
	if s.tokenFile != file {
		t.Fatalf("token file %q, want %q", s.tokenFile, file)
	}
	tok := readToken(t, file)
	if got := post(t, s.url, "", "Bearer "+tok); got != http.StatusOK {
		t.Errorf("with the token: %d", got)
	}
	must(t, s.cmd.Process.Signal(syscall.SIGTERM))
	<-s.done
	if got := readToken(t, file); got != tok {
		t.Fatalf("--token-file was not kept: %q then %q", tok, got)
	}
	s = startHTTP(t, root, env, "--token-file", file)
	if got := post(t, s.url, "", "Bearer "+tok); got != http.StatusOK {
		t.Errorf("a restart with the same --token-file refused its token: %d", got)
	}
	if got := post(t, s.url, "", ""); got != http.StatusUnauthorized {
		t.Errorf("without the token: %d", got)
	}

	must(t, os.Chmod(file, 0o644))
	out, err := brood(t, root, env, "mcp", "--http", "127.0.0.1:0", "--token-file", file).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "chmod 600 "+file) {
		t.Errorf("a token file others may read was accepted: %v\n%s", err, out)
	}
	out, err = brood(t, root, env, "mcp", "--token-file", file).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--token-file goes with --http") {
		t.Errorf("--token-file without --http: %v\n%s", err, out)
	}
	out, err = brood(t, root, append(env, "BROOD_MCP_TOKEN=short"), "mcp", "--http", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "at least 16") {
		t.Errorf("a short BROOD_MCP_TOKEN was accepted: %v\n%s", err, out)
	}

	const given = "given-token-given-token-given-token"
	s = startHTTP(t, root, append(env, "BROOD_MCP_TOKEN="+given))
	if s.tokenFile != "" {
		t.Errorf("a token given in the environment was written to %s", s.tokenFile)
	}
	if got := post(t, s.url, "", "Bearer "+given); got != http.StatusOK {
		t.Errorf("with BROOD_MCP_TOKEN's token: %d", got)
	}
	if got := post(t, s.url, "", "Bearer "+tok); got != http.StatusUnauthorized {
		t.Errorf("another token with BROOD_MCP_TOKEN set: %d", got)
	}
}
