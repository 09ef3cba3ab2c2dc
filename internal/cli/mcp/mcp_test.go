package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	mcpcli "github.com/broodhq/brood/internal/cli/mcp"
	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestMain lets the test binary be brood: `brood mcp` runs as a real
// process, and its children are this binary again.
// The notes MCP server (mcptest) is this binary too.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	testbrood.Main(m, "BROOD_TEST_MAIN")
}

const script = `agents:
  explore:
    - tools:
        - Read: {file_path: README.md}
    - say: "The README says: {{first (result 0)}}"
`

// project makes a git repository with a script model and returns its root
// and the environment `brood mcp` runs with there.
func project(t *testing.T) (string, []string) {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	must(t, os.MkdirAll(filepath.Join(root, ".brood"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".brood/\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("# demo project\n"), 0o644))
	sp := filepath.Join(root, ".brood", "script.yaml")
	must(t, os.WriteFile(sp, []byte(script), 0o644))
	env := append(os.Environ(), "BROOD_TEST_MAIN=1", "HOME="+home, "BROOD_MODEL=script:"+sp)
	return root, env
}

func brood(t *testing.T, root string, env []string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	must(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env = root, env
	return cmd
}

// delegate calls Task over cs and checks the wrapped, verified result.
func delegate(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Task", Arguments: map[string]any{
		"subagent_type": "explore", "description": "read the readme", "prompt": "What does README.md say?",
	}})
	must(t, err)
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, `agent="explore" status="done" trust="untrusted"`) || !strings.Contains(text, "# demo project") {
		t.Fatalf("Task = %v\n%s", res.IsError, text)
	}
}

func TestStdio(t *testing.T) {
	root, env := project(t)
	cmd := brood(t, root, env, "mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	must(t, err)
	if got := cs.InitializeResult().ServerInfo.Name; got != "brood" {
		t.Errorf("server name %q", got)
	}
	delegate(t, cs)
	must(t, cs.Close())
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("brood mcp did not exit cleanly after the client closed: %v", cmd.ProcessState)
	}
}

func TestHTTPRefusesNonLoopback(t *testing.T) {
	root, env := project(t)
	out, err := brood(t, root, env, "mcp", "--http", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "only a loopback address") {
		t.Errorf("brood mcp --http 0.0.0.0:0 = %v\n%s", err, out)
	}
}

func TestDepthClaimOnlyDeepens(t *testing.T) {
	root, env := project(t)
	// A caller claiming depth 0 of a cap of 5 gets the project's cap (1);
	// one claiming depth 1 is at the cap and cannot delegate.
	cmd := brood(t, root, append(env, "BROOD_SUBAGENT_DEPTH=1"), "mcp")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "depth cap") {
		t.Errorf("brood mcp at depth 1 = %v\n%s", err, out)
	}
	// A process started as a brood child (its parent's marker in argv[0],
	// which nothing below the child can undo) is below the cap, whatever
	// its environment says.
	cmd = brood(t, root, append(env, "BROOD_SUBAGENT_DEPTH=0"), "mcp")
	cmd.Args[0] = "brood-01ARZ3NDEKTSV4RRFFQ69G5FAV-d1-m1"
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "at depth 1 and the subagent depth cap is 1") {
		t.Errorf("brood mcp under a child's marker = %v\n%s", err, out)
	}
	cmd = brood(t, root, append(env, "BROOD_SUBAGENT_DEPTH=0", "BROOD_SUBAGENT_MAX_DEPTH=5"), "mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	must(t, err)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ListAgents"})
	must(t, err)
	if res.IsError {
		t.Fatal(res.Content[0].(*mcp.TextContent).Text)
	}
	delegate(t, cs)
	logs, _ := filepath.Glob(filepath.Join(root, ".brood", "dispatch", "*", "dispatch-log.json"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if !strings.Contains(string(b), `"max_depth": 1`) {
			t.Errorf("a caller's claim raised the cap: %s", b)
		}
	}
	if len(logs) == 0 {
		t.Error("no dispatch log")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		http string
	}{
		{nil, ""},
		{[]string{"--http", "127.0.0.1:7345"}, "127.0.0.1:7345"},
	} {
		var got *mcpcli.Options
		cmd := mcpcli.NewCmdMCP(&cmdutil.Factory{}, "v1", func(_ context.Context, o *mcpcli.Options) error { got = o; return nil })
		cmd.SetArgs(append([]string{}, tc.args...))
		must(t, cmd.Execute())
		if got == nil || got.HTTP != tc.http || got.Version != "v1" {
			t.Errorf("%v: options %+v", tc.args, got)
		}
	}
}
