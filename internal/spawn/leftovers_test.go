package spawn

import (
	"github.com/broodhq/brood/internal/taskdir"

	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLeftoversListCannotAimOutside: groups.json is the child's to write; a
// group it lists that is not in its session is left alone, and so is the
// session leader itself. (That a group inside the session is killed is
// TestLeftoverProcessesDieWithTheirChild.)
func TestLeftoversListCannotAimOutside(t *testing.T) {
	start := func(attr *syscall.SysProcAttr) *exec.Cmd {
		c := exec.Command("sleep", "300")
		c.SysProcAttr = attr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	outside := start(&syscall.SysProcAttr{Setpgid: true})
	// A "child" in a session of its own, and a group inside that session.
	leader := start(&syscall.SysProcAttr{Setsid: true})
	td := taskdir.Open(t.TempDir()).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	list := "[" + strconv.Itoa(outside.Process.Pid) + "," + strconv.Itoa(leader.Process.Pid) + "]"
	if err := os.WriteFile(td.File(GroupsFile), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	killLeftovers(td, leader.Process.Pid)
	if err := syscall.Kill(outside.Process.Pid, 0); err != nil {
		t.Fatalf("a group outside the child's session was killed: %v", err)
	}
	if err := syscall.Kill(leader.Process.Pid, 0); err != nil {
		t.Fatalf("the child's own session leader was killed by its leftovers list: %v", err)
	}
	if !groupsInSession(leader.Process.Pid)[leader.Process.Pid] {
		t.Fatal("groupsInSession does not see the session's own group")
	}
}

func TestChildModel(t *testing.T) {
	cases := []struct{ def, parent, want string }{
		{"", "ollama/qwen3", "ollama/qwen3"},
		{"inherit", "anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"haiku", "anthropic/claude-sonnet-4-5", "haiku"},
		{"haiku", "ollama/qwen3", "ollama/qwen3"},
		{"Sonnet", "script:/x.yaml", "script:/x.yaml"},
		{"openai/gpt-5", "ollama/qwen3", "openai/gpt-5"},
	}
	for _, c := range cases {
		if got, _ := childModel(c.def, c.parent, os.Getenv); got != c.want {
			t.Errorf("childModel(%q, %q) = %q, want %q", c.def, c.parent, got, c.want)
		}
	}
	// A full claude-* id stays when Anthropic credentials are configured,
	// and is read as the parent's model when none are.
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	if got, note := childModel("claude-haiku-4-5", "ollama/qwen3", os.Getenv); got != "ollama/qwen3" || !strings.Contains(note, "no Anthropic credentials") {
		t.Errorf("without credentials: %q, %q", got, note)
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	if got, _ := childModel("claude-haiku-4-5", "ollama/qwen3", os.Getenv); got != "claude-haiku-4-5" {
		t.Errorf("with credentials: %q", got)
	}
}
