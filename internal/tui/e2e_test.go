package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
)

// asBrood makes the test binary act as brood: tmux runs it as the
// interactive mode, and it re-executes itself for the subagent children.
const asBrood = "BROOD_TUI_TEST_AS_BROOD"

func TestMain(m *testing.M) { testbrood.Main(m, asBrood) }

// term is brood's interactive mode running in a detached tmux session of
// 120x40 on a server of its own.
type term struct {
	t    *testing.T
	sock string
	root string
}

// startTUI writes files into a new project and opens `brood` in tmux.
func startTUI(t *testing.T, script string, files map[string]string, args ...string) *term {
	t.Helper()
	return newTUIProject(t, script, files).open(t, args...)
}

// tuiProject is a project (a git repository with the script) and its HOME.
type tuiProject struct{ root, home string }

// newTUIProject writes files into a new project.
func newTUIProject(t *testing.T, script string, files map[string]string) tuiProject {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the interactive tests (scripts/test installs it)")
	}
	root, home := t.TempDir(), t.TempDir()
	files["README.md"] = "# sample\n"
	files[".brood/script.yaml"] = script
	for name, body := range files {
		p := filepath.Join(root, name)
		if strings.HasPrefix(name, "~/") {
			p = filepath.Join(home, name[2:])
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return tuiProject{root: root, home: home}
}

// env is the environment brood runs in: nothing of the test's but PATH.
func (p tuiProject) env(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", "-i", "PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "TERM=xterm-256color", "NO_COLOR=1",
		asBrood + "=1", "BROOD_CHILD_EXE=" + exe}
}

// brood is the command line that opens the interactive mode.
func (p tuiProject) brood(t *testing.T, args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{exe, "--model", "script:" + filepath.Join(p.root, ".brood/script.yaml")}, args...)
}

// open opens `brood ARGS` in a new tmux server; its stderr goes to
// stderr.log in the project, and BROOD-EXITED shows when it has gone.
func (p tuiProject) open(t *testing.T, args ...string) *term {
	t.Helper()
	return p.openSized(t, 120, 40, args...)
}

// openSized is open on a window of w×h from the start.
func (p tuiProject) openSized(t *testing.T, w, h int, args ...string) *term {
	t.Helper()
	cmdline := append(p.env(t), p.brood(t, args...)...)
	tm := p.tmuxSized(t, w, h, strings.Join(quoteAll(cmdline), " ")+" 2>"+filepath.Join(p.root, "stderr.log")+"; echo BROOD-EXITED; sleep 600")
	tm.waitFor("ask brood, or /help")
	return tm
}

// tmux starts a detached 120x40 session running shellCmd on a server of
// its own, killed when the test ends (its screen logged if it failed).
//
// Every server gets a socket path never used before: a server killed a
// moment ago may still be exiting on its old socket, and a client that
// reaches it there fails ("server exited unexpectedly") — which is how
// reusing a socket name (a reopened session, a test run with -count=N)
// flaked on a loaded machine.
func (p tuiProject) tmux(t *testing.T, shellCmd string) *term {
	t.Helper()
	return p.tmuxSized(t, 120, 40, shellCmd)
}

// tmuxSized is tmux on a window of w×h from the start.
func (p tuiProject) tmuxSized(t *testing.T, w, h int, shellCmd string) *term {
	t.Helper()
	root := p.root
	dir, err := os.MkdirTemp("", "brood-tmux-") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	tm := &term{t: t, sock: filepath.Join(dir, "sock"), root: root}
	cmd := exec.Command("tmux", "-S", tm.sock, "-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", root, shellCmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen at failure:\n%s", tm.screen())
			if b, err := os.ReadFile(filepath.Join(root, "stderr.log")); err == nil {
				t.Logf("stderr:\n%s", b)
			}
			logs, _ := filepath.Glob(filepath.Join(root, ".brood", "dispatch", "*", "*.[jl][so][og]*"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
		}
		tm.close()
	})
	return tm
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

func (tm *term) screen() string {
	out, err := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-p", "-t", "0").Output()
	if err != nil {
		return "(capture-pane: " + err.Error() + ")"
	}
	return string(out)
}

// waitFor polls the screen until every text appears on it at once, up to
// a deadline generous enough for a loaded machine.
func (tm *term) waitFor(texts ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s := tm.screen()
		all := true
		for _, x := range texts {
			if !strings.Contains(s, x) {
				all = false
			}
		}
		if all {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out waiting for %q", texts)
		}
		<-tick.C
	}
}

// waitForFunc polls the screen until ok holds for it, up to the same
// deadline as waitFor.
func (tm *term) waitForFunc(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// resize makes the terminal w columns by h rows.
func (tm *term) resize(w, h int) {
	tm.t.Helper()
	if out, err := exec.Command("tmux", "-S", tm.sock, "resize-window", "-t", "0", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h)).CombinedOutput(); err != nil {
		tm.t.Fatalf("resize-window: %v %s", err, out)
	}
}

// waitFile polls until the project holds the file, up to a deadline.
func (tm *term) waitFile(name string) {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(tm.root, name)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out waiting for %s", name)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline, not synchronisation by sleep
	}
}

// keys sends tmux key names (Enter, C-t, Down, ...) or literal text (-l).
func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-S", tm.sock, "send-keys", "-t", "0"}, keys...)...).CombinedOutput(); err != nil {
		tm.t.Fatalf("send-keys %q: %v %s", keys, err, out)
	}
}

func (tm *term) typeLine(s string) {
	tm.t.Helper()
	tm.keys("-l", s)
	tm.keys("Enter")
}

// exit presses Ctrl-C twice and waits for brood to be gone.
func (tm *term) exit() {
	tm.t.Helper()
	tm.keys("C-c")
	tm.waitFor("Ctrl-C again to exit")
	tm.keys("C-c")
	tm.waitFor("BROOD-EXITED")
}

const fanOutScript = `agents:
  root:
    - say: "Two looks in parallel."
      tools:
        - Task: {subagent_type: explore, description: "Survey the docs", prompt: "List the markdown files."}
        - Task: {subagent_type: explore, description: "Find entry points", prompt: "Find func main."}
    - say: "Both subagents reported: FANOUT-OK."
  explore:
    - say: "Looking."
      tools:
        - Glob: {pattern: "**/*.md"}
    - say: "Found the README."
`

func TestTUIFanOut(t *testing.T) {
	tm := startTUI(t, fanOutScript, map[string]string{})
	tm.typeLine("survey this project")
	s := tm.waitFor("FANOUT-OK", "subagents: 0 running, 2 finished")
	if strings.Count(s, "explore ") < 2 || strings.Count(s, " done ") < 2 {
		t.Fatalf("the tree does not show two finished explore tasks:\n%s", s)
	}
	tm.waitFor("ready · script")
	tm.exit()
}

func TestTUISubagentCommand(t *testing.T) {
	tm := startTUI(t, fanOutScript, map[string]string{})
	tm.keys("-l", "/suba")
	tm.keys("Tab")
	tm.waitFor("› /subagent")
	tm.keys("-l", "expl")
	tm.keys("Tab")
	tm.waitFor("› /subagent explore")
	tm.typeLine(`"How does the auth middleware work?"`)
	tm.waitFor("dispatched explore as task")
	tm.waitFor("subagents: 0 running, 1 finished")
	tm.keys("C-t")
	tm.keys("Enter")
	tm.waitFor("│ Found the README.")
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.typeLine("/nosuch")
	tm.waitFor("unknown command /nosuch")
	tm.typeLine(`/subagent nobody "x"`)
	tm.waitFor(`unknown subagent_type "nobody"`)
	tm.exit()
}

func TestTUIKillFromTree(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - say: "Starting a long job."
      tools:
        - Task: {subagent_type: explore, description: "Slow job", prompt: "Take forever.", run_in_background: true}
    - say: "Started it."
  explore:
    - say: "thinking forever"
      delay: 1h
`, map[string]string{})
	tm.typeLine("start the slow job")
	tm.waitFor("Started it.", "explore", "running")
	tm.keys("C-t")
	tm.waitFor("x kill")
	tm.keys("x")
	s := tm.waitFor("stopped task", "0 running, 1 finished")
	if !strings.Contains(s, " killed ") && !strings.Contains(s, " cancelled ") {
		t.Fatalf("the killed task does not show a final status:\n%s", s)
	}
	// The stopping hint goes with the task (today's main kept it until the
	// next key).
	if strings.Contains(s, "(SIGTERM, then SIGKILL)…") {
		t.Errorf("the stopped task's hint still reads stopping:\n%s", s)
	}
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.exit()
}

func TestTUISteer(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - say: "Delegating."
      tools:
        - Task: {subagent_type: general-purpose, description: "Long task", prompt: "Work until told.", run_in_background: true, isolation: none}
    - say: "Delegated."
  general-purpose:
    - say: "Waiting for the go signal."
      tools:
        - Bash: {command: "sh wait.sh"}
    - cases:
        - if: "focus on tests"
          say: "STEERED: I will focus on tests."
      say: "NOT STEERED"
`, map[string]string{
		"wait.sh":                       "touch started.flag; while [ ! -e go.flag ]; do sleep 0.05; done\n",
		"~/.config/brood/settings.toml": "[permissions]\nallow = [\"Bash(sh:*)\"]\n",
	})
	tm.typeLine("delegate it")
	tm.waitFor("Delegated.", "general-purpose", "running")
	// A message sent before the child's first turn would reach that turn;
	// this one must arrive while the child works.
	tm.waitFile("started.flag")
	tm.keys("C-t")
	tm.keys("m")
	tm.waitFor("message to general-purpose")
	tm.typeLine("focus on tests")
	tm.waitFor("✉ to")
	if err := os.WriteFile(filepath.Join(tm.root, "go.flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("0 running, 1 finished")
	tm.keys("Enter")
	tm.waitFor("│ STEERED: I will focus on tests.")
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.exit()
}

const askScript = `agents:
  root:
    - say: "First job."
      tools:
        - Task: {subagent_type: general-purpose, description: "first job", prompt: "Touch a file.", isolation: none}
    - say: "Second job."
      tools:
        - Task: {subagent_type: general-purpose, description: "second job", prompt: "Touch another file.", isolation: none}
    - say: "ROOT-DONE"
  general-purpose:
    - cases:
        - if: "second job"
          tools:
            - Bash: {command: "touch denied.txt"}
      tools:
        - Bash: {command: "touch once.txt"}
    - cases:
        - if: "the user declined"
          say: "CHILD-SAW-DENIAL"
      say: "CHILD-RAN-IT"
`

// TestTUIAskOnceAndDeny: a child's Bash call that needs approval reaches
// the user, named by agent and task with the exact command; "once" lets it
// run, "deny" reaches the child as a denial.
func TestTUIAskOnceAndDeny(t *testing.T) {
	tm := startTUI(t, askScript, map[string]string{})
	tm.typeLine("do both jobs")
	s := tm.waitFor("general-purpose (task", "asks to use Bash:", "touch once.txt", "y allow once")
	if !strings.Contains(s, "adds Bash(touch:*)") {
		t.Errorf("the question does not say which rule always would add:\n%s", s)
	}
	tm.keys("y")
	tm.waitFor("allowed once: Bash touch once.txt", "touch denied.txt", "y allow once")
	if _, err := os.Stat(filepath.Join(tm.root, "once.txt")); err != nil {
		t.Errorf("the command allowed once did not run: %v", err)
	}
	tm.keys("n")
	tm.waitFor("denied: Bash touch denied.txt", "ROOT-DONE")
	if _, err := os.Stat(filepath.Join(tm.root, "denied.txt")); err == nil {
		t.Error("the denied command ran")
	}
	tm.keys("C-t")
	tm.keys("Enter")
	tm.waitFor("│ CHILD-RAN-IT")
	tm.keys("Down")
	tm.keys("Enter")
	tm.waitFor("│ CHILD-SAW-DENIAL")
	tm.keys("Escape")
	tm.waitFor("(Ctrl-T to select)")
	tm.exit()
}

// TestTUIAskNestedAlways: a grandchild's question comes up through its
// parent, says so, and "always" keeps the rule in the local settings.
func TestTUIAskNestedAlways(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "outer", prompt: "Delegate a touch.", isolation: none}
    - say: "ROOT-DONE"
  general-purpose:
    - cases:
        - if: "inner"
          tools:
            - Bash: {command: "touch nested.txt"}
      tools:
        - Task: {subagent_type: general-purpose, description: "inner", prompt: "Touch it.", isolation: none}
    - say: "done"
`, map[string]string{"~/.config/brood/settings.toml": "maxSubagentDepth = 2\n"})
	tm.typeLine("go deep")
	tm.waitFor("asks to use Bash:", "touch nested.txt", ", via task", "y allow once")
	tm.keys("a")
	tm.waitFor("allowed always: Bash(touch:*)", "ROOT-DONE")
	b, err := os.ReadFile(filepath.Join(tm.root, ".brood", "settings.local.toml"))
	if err != nil || !strings.Contains(string(b), `"Bash(touch:*)"`) {
		t.Fatalf("settings.local.toml = %q, %v", b, err)
	}
	ign, _ := os.ReadFile(filepath.Join(tm.root, ".brood", ".gitignore"))
	if !strings.Contains(string(ign), "settings.local.toml") {
		t.Errorf(".brood/.gitignore does not keep the local settings out of git: %q", ign)
	}
	if _, err := os.Stat(filepath.Join(tm.root, "nested.txt")); err != nil {
		t.Errorf("the grandchild's allowed command did not run: %v", err)
	}
	tm.exit()
}

// TestTUIWorkflow: /workflow checks the plan, says how many agents it
// starts, asks once, and runs it with its agents under the run in the tree.
func TestTUIWorkflow(t *testing.T) {
	tm := startTUI(t, `agents:
  explore:
    - say: "looked"
`, map[string]string{"plan.yaml": `name: two-looks
phases:
  - id: look
    parallel:
      - {agent: explore, prompt: "look at the docs"}
      - {agent: explore, prompt: "look at the code"}
`})
	tm.keys("-l", "/work")
	tm.keys("Tab")
	tm.waitFor("› /workflow")
	tm.typeLine("plan.yaml")
	tm.waitFor("Start workflow two-looks: 2 agents?", "y start")
	tm.keys("y")
	s := tm.waitFor("workflow two-looks", "workflow run", " done: 2 agents")
	if strings.Count(s, "  ▸ explore") != 2 {
		t.Fatalf("the run's two agents are not under it in the tree:\n%s", s)
	}
	tm.exit()
}

// TestTUIAskOutlastsTheLifeguard: a child waiting on its question for
// longer than the lifeguard's silence limit is left alone (its heartbeat
// goes on while it waits), and runs the command once it is allowed.
func TestTUIAskOutlastsTheLifeguard(t *testing.T) {
	const limit = 3 * time.Second
	tm := startTUI(t, askScript, map[string]string{
		"~/.config/brood/settings.toml": fmt.Sprintf("[pool]\nheartbeat_timeout = %q\nping_interval = \"100ms\"\n", limit),
	})
	tm.typeLine("do both jobs")
	tm.waitFor("asks to use Bash:", "touch once.txt", "y allow once")
	// Hold the question for twice the limit (a hold, not a synchronisation:
	// the time is what is tested), watching that the child is not killed.
	for held := time.Now(); time.Since(held) < 2*limit; {
		if s := tm.screen(); !strings.Contains(s, "touch once.txt") || strings.Contains(s, "heartbeat") {
			t.Fatalf("the child did not wait for its answer:\n%s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.keys("y")
	tm.waitFor("allowed once: Bash touch once.txt", "touch denied.txt", "y allow once")
	if _, err := os.Stat(filepath.Join(tm.root, "once.txt")); err != nil {
		t.Errorf("the command allowed after the wait did not run: %v", err)
	}
	tm.keys("n")
	tm.waitFor("denied: Bash touch denied.txt", "ROOT-DONE", "0 running, 2 finished")
	// The first child finishes done; the second says done after the user
	// refused its call, which its parent's unauthorized guardrail (reject
	// by default) turns into rejected.
	if s := tm.screen(); strings.Count(s, " done ") < 1 || !strings.Contains(s, " rejected ") {
		t.Errorf("the children did not finish done and rejected:\n%s", s)
	}
	tm.exit()
}

// TestTUIEnableSubagents: the interactive mode takes --enable-subagents
// (HooCode's shorthand for --max-subagent-depth 2): the root's
// general-purpose child delegates once more, and its grandchild runs.
func TestTUIEnableSubagents(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "Middle", prompt: "Delegate a read."}
    - say: 'ROOT SAW {{grep "GRANDCHILD" (result 0)}}'
  general-purpose:
    - tools:
        - Task: {subagent_type: explore, description: "Grandchild", prompt: "Read the README."}
    - say: |
        ## What I did
        Delegated.
        ## What I found
        {{grep "GRANDCHILD" (result 0)}}
        ## Files changed
        none
        ## Problems
        none
  explore:
    - tools: [{Read: {file_path: README.md}}]
    - say: "## What I did\nRead it.\n## What I found\nGRANDCHILD-OK at depth 2\n## Files changed\nnone\n## Problems\nnone"
`, map[string]string{}, "--enable-subagents")
	tm.typeLine("go deep")
	tm.waitFor("ROOT SAW", "GRANDCHILD-OK at depth 2")
	tm.waitFor("ready · script")
	tm.exit()
}

// TestTUIAskNamesTheOption (issue 23): with Bash(git log:*) allowed, a
// git log --output=FILE is asked about, and the question says why: the
// rule covers git log but not --output, which writes a file. The root's
// own ask and a child's (relayed through the protocol) both say it.
func TestTUIAskNamesTheOption(t *testing.T) {
	tm := startTUI(t, `agents:
  root:
    - tools:
        - Bash: {command: "git log -1 --output=root-out.txt"}
    - tools:
        - Task: {subagent_type: general-purpose, description: "child", prompt: "Log it.", isolation: none}
    - say: "ROOT-DONE"
  general-purpose:
    - tools:
        - Bash: {command: "git log -1 --output=child-out.txt"}
    - say: "done"
`, map[string]string{"~/.config/brood/settings.toml": "[permissions]\nallow = [\"Bash(git log:*)\"]\n"})
	tm.typeLine("log")
	why := `why: allow rule "Bash(git log:*)" covers the command but not --output, which writes a file`
	tm.waitFor("the root agent asks to use Bash:", "git log -1 --output=root-out.txt", why, "y allow once")
	tm.keys("n")
	tm.waitFor("general-purpose (task", "git log -1 --output=child-out.txt", why, "y allow once")
	tm.keys("n")
	tm.waitFor("ROOT-DONE")
	tm.exit()
}
