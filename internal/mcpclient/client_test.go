package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/mcpclient"
	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/tool"
)

func notesSpec(t *testing.T) mcpspec.Spec {
	exe, err := os.Executable()
	must(t, err)
	return mcpspec.Spec{Command: exe, Env: map[string]string{mcptest.EnvServer: "1"}}
}

func names(ts []tool.Tool) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return strings.Join(out, ",")
}

func TestStdioServerStartsAndStops(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	spec := notesSpec(t)
	spec.Env[mcptest.EnvPID] = pidFile
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		server   mcpspec.Server
		readOnly bool
		want     string
	}{
		{"all tools", mcpspec.Server{Name: "notes", Spec: spec}, false, "mcp__notes__echo,mcp__notes__has_env,mcp__notes__write_note"},
		{"listed tools", mcpspec.Server{Name: "notes", Spec: spec, Tools: []string{"write_note"}}, false, "mcp__notes__write_note"},
		{"withheld", mcpspec.Server{Name: "notes", Spec: spec, Without: []string{"echo"}}, false, "mcp__notes__has_env,mcp__notes__write_note"},
		{"read-only agent", mcpspec.Server{Name: "notes", Spec: spec}, true, "mcp__notes__echo,mcp__notes__has_env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mcpclient.Connect(ctx, []mcpspec.Server{tc.server}, mcpclient.Options{Dir: dir, Env: os.Environ(), ReadOnly: tc.readOnly})
			if got := names(s.Tools()); got != tc.want {
				t.Errorf("tools = %s, want %s (notes: %v)", got, tc.want, s.Notes)
			}
			if tc.readOnly && (len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "mcp__notes__write_note withheld")) {
				t.Errorf("notes = %q", s.Notes)
			}
			set := tool.NewSet(s.Tools()...)
			if tc.name == "all tools" {
				if r := set.Run(ctx, &tool.Env{Dir: dir}, "mcp__notes__echo", json.RawMessage(`{"text":"hi"}`)); r.IsError || r.Content != "echo: hi" {
					t.Errorf("echo = %+v", r)
				}
				if r := set.Run(ctx, &tool.Env{Dir: dir}, "mcp__notes__echo", json.RawMessage(`{}`)); !r.IsError {
					t.Errorf("echo without its required text = %+v", r)
				}
			}
			b, err := os.ReadFile(pidFile)
			must(t, err)
			pid, _ := strconv.Atoi(string(b))
			must(t, s.Close())
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the server (pid %d) outlived Close: %v", pid, err)
			}
		})
	}
}

func TestPermissionRulesCoverServerTools(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mcpclient.Connect(ctx, []mcpspec.Server{{Name: "notes", Spec: notesSpec(t)}}, mcpclient.Options{Dir: dir, Env: os.Environ()})
	defer s.Close()
	set := tool.NewSet(s.Tools()...)
	for _, tc := range []struct {
		allow, deny []string
		tool        string
		ok          bool
	}{
		{nil, nil, "mcp__notes__echo", true},        // readOnlyHint: allowed as Read is
		{nil, nil, "mcp__notes__write_note", false}, // no one to ask: denied
		{[]string{"mcp__notes__write_note"}, nil, "mcp__notes__write_note", true},
		{[]string{"mcp__notes__*"}, nil, "mcp__notes__write_note", true},
		{[]string{"mcp__notes"}, nil, "mcp__notes__write_note", true},
		{[]string{"mcp__other__*"}, nil, "mcp__notes__write_note", false},
		{[]string{"mcp__notes__*"}, []string{"mcp__notes__write_note"}, "mcp__notes__write_note", false},
		{nil, []string{"mcp__notes__*"}, "mcp__notes__echo", false},
	} {
		perms, err := tool.NewPermissions("default", tc.allow, tc.deny, nil)
		must(t, err)
		r := set.Run(ctx, &tool.Env{Dir: dir, Perms: perms}, tc.tool, json.RawMessage(`{"text":"x"}`))
		if r.IsError == tc.ok {
			t.Errorf("allow %v deny %v: %s = %+v", tc.allow, tc.deny, tc.tool, r)
		}
		if !tc.ok && !strings.Contains(r.Content, "permission denied") {
			t.Errorf("allow %v deny %v: %s refused without saying why: %s", tc.allow, tc.deny, tc.tool, r.Content)
		}
	}
}

// TestServerToolsAreNeverRunAgain: a fleet pick-up does not run an MCP
// call again, even one its server marks readOnlyHint (a claim brood cannot
// check), which still counts as read-only for a read-only agent.
func TestServerToolsAreNeverRunAgain(t *testing.T) {
	ctx := context.Background()
	s := mcpclient.Connect(ctx, []mcpspec.Server{{Name: "notes", Spec: notesSpec(t)}}, mcpclient.Options{Dir: t.TempDir(), Env: os.Environ()})
	defer s.Close()
	readOnly := 0
	for _, tl := range s.Tools() {
		if tl.ReadOnly() {
			readOnly++
		}
		if tool.SafeToRerun(tl) {
			t.Errorf("%s is safe to run again", tl.Spec().Name)
		}
	}
	if readOnly == 0 {
		t.Fatal("the notes server has no readOnlyHint tool to check")
	}
}

func TestHTTPServerWithHeaders(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcptest.Notes() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	spec := mcpspec.Spec{Type: "http", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${NOTES_TOKEN}"}}
	ctx := context.Background()
	env := map[string]string{"NOTES_TOKEN": "s3cret"}
	s := mcpclient.Connect(ctx, []mcpspec.Server{{Name: "remote", Spec: spec, Tools: []string{"echo"}}}, mcpclient.Options{Getenv: func(k string) string { return env[k] }})
	defer s.Close()
	if got := names(s.Tools()); got != "mcp__remote__echo" {
		t.Fatalf("tools = %s (notes %v)", got, s.Notes)
	}
	if r := tool.NewSet(s.Tools()...).Run(ctx, nil, "mcp__remote__echo", json.RawMessage(`{"text":"over http"}`)); r.Content != "echo: over http" {
		t.Errorf("echo = %+v", r)
	}
	// Without the variable the server is left out, and the note says why.
	s2 := mcpclient.Connect(ctx, []mcpspec.Server{{Name: "remote", Spec: spec}}, mcpclient.Options{Getenv: func(string) string { return "" }})
	if len(s2.Tools()) != 0 || len(s2.Notes) != 1 || !strings.Contains(s2.Notes[0], "NOTES_TOKEN is not set") {
		t.Errorf("tools %s, notes %q", names(s2.Tools()), s2.Notes)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
