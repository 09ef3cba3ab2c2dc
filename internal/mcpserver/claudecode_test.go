package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// claudeBinary is Claude Code, against which TestClaudeCodeKeepsTaskEager
// checks what it defers.
const claudeBinary = "/usr/bin/claude"

// fakeMessages is a loopback Anthropic Messages API that answers "hello"
// (streamed or not) and keeps the tool names of each request.
type fakeMessages struct {
	mu    sync.Mutex
	tools [][]string
}

func (f *fakeMessages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	if strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":10}`)
		return
	}
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	f.mu.Lock()
	f.tools = append(f.tools, names)
	f.mu.Unlock()
	model, _ := json.Marshal(req.Model)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":%s,"content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":2}}`, model)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []string{
		`message_start`, fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":0}}}`, model),
		`content_block_start`, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`content_block_delta`, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}`,
		`content_block_stop`, `{"type":"content_block_stop","index":0}`,
		`message_delta`, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`,
		`message_stop`, `{"type":"message_stop"}`,
	} {
		if strings.HasPrefix(ev, "{") {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		} else {
			fmt.Fprintf(w, "event: %s\n", ev)
		}
	}
}

// TestClaudeCodeKeepsTaskEager runs the real Claude Code (2.1.332) with
// `brood mcp` as its MCP server against a loopback model and reads the
// tools of its first request: Claude Code defers every MCP tool behind
// ToolSearch unless the server marks it anthropic/alwaysLoad (annotations
// and short descriptions make no difference), so brood's Task and
// TaskOutput are in the prompt from the first turn and the rest are
// deferred; "alwaysLoad": false in the client's configuration defers them
// all, as docs/mcp.md says.
func TestClaudeCodeKeepsTaskEager(t *testing.T) {
	if _, err := os.Stat(claudeBinary); err != nil {
		t.Skipf("Claude Code is not installed at %s: %v", claudeBinary, err)
	}
	exe, err := os.Executable()
	must(t, err)
	for _, tc := range []struct {
		name       string
		alwaysLoad string
		want       []string
	}{
		{"default", "", []string{"ToolSearch", "mcp__brood__Task", "mcp__brood__TaskOutput"}},
		{"alwaysLoad false", `,"alwaysLoad":false`, []string{"ToolSearch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeMessages{}
			srv := httptest.NewServer(api)
			defer srv.Close()
			dir, home := t.TempDir(), t.TempDir()
			if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			cfg := filepath.Join(t.TempDir(), "mcp.json")
			must(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers":{"brood":{"command":%q,"args":["mcp"],"env":{"BROOD_TEST_MAIN":"1","HOME":%q}%s}}}`, exe, home, tc.alwaysLoad)), 0o644))
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, claudeBinary, "-p", "Say hello", "--mcp-config", cfg)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-test",
				"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ENABLE_TOOL_SEARCH=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("claude: %v\n%s", err, out)
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			if len(api.tools) == 0 {
				t.Fatalf("claude sent no request:\n%s", out)
			}
			var got []string
			for _, n := range api.tools[0] {
				if n == "ToolSearch" || strings.HasPrefix(n, "mcp__") {
					got = append(got, n)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("the first request's ToolSearch and MCP tools = %v, want %v", got, tc.want)
			}
		})
	}
}
