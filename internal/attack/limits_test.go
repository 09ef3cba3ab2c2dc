package attack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// userLimits writes the user's [limits] (a person's own settings: no trust
// step) into the project's HOME.
func (p *project) userLimits(toml string) {
	p.t.Helper()
	writeFile(p.t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "[limits]\n"+toml)
}

// subagentResult runs `brood subagent --json` and returns the last JSON
// line (the task's outcome) with the run's output.
func (p *project) subagentResult(ctx context.Context, env []string, args ...string) (map[string]any, string) {
	p.t.Helper()
	code, out, errs := p.brood(ctx, env, append([]string{"subagent", "--json"}, args...)...)
	if ctx.Err() != nil {
		p.t.Fatalf("brood subagent did not end (killed by the test's deadline)\n%s\n%s", out, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimRight(out, "\n"), "\n{")+1:]), &v); err != nil {
		p.t.Fatalf("brood subagent: code %d, last line of --json: %v\n%s\n%s", code, err, out, errs)
	}
	return v, out + errs
}

// bombPy forks (each child sleeps) until 1500 or refused; hogPy takes
// 9 GiB and touches every page (more than the rlimit fallback's per-process
// address space of at least 4 GiB, as well as the cgroup's 512 MiB).
const (
	bombPy = `import os, time
n = 0
try:
    while n < 1500:
        if os.fork() == 0:
            time.sleep(1000)
            os._exit(0)
        n += 1
except OSError as e:
    print("refused after", n, e)
print("forked", n, flush=True)
`
	hogPy = `b = bytearray(9 << 30)
for i in range(0, len(b), 4096):
    b[i] = 1
print("survived")
`
)

// TestChildLimits (issue 23 case 9): a read-only child that forks without
// end, or that allocates far past its memory limit, is stopped. Where a
// cgroup holds the limit (cgroup v2, or v1 on a hybrid machine: as root
// here) the whole child is killed and its task ends killed with the limit
// named, in the parent's records; where only rlimits hold it (a non-root
// user with no delegated cgroup) the command is refused what exceeds the
// limit, and the child goes on.
func TestChildLimits(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Fatal("no Landlock: read-only agents get no Bash here, and the attack needs it")
	}
	for _, c := range []struct {
		name, key, limits, script, want, refused string
	}{
		{"fork bomb", "processes", "processes = 300\n", bombPy, "killed by the process limit of 300", "refused after"},
		{"memory hog", "memory", "memory = \"512MiB\"\n", hogPy, "killed by the memory limit of 512 MiB", "MemoryError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, cont := range containments {
				t.Run(cont.name, func(t *testing.T) {
					p := newProject(t, map[string]string{"README.md": "# x\n", "consume.py": c.script})
					p.userLimits(c.limits)
					how := pool.ProbeLimits(t.Context(), strings.TrimPrefix(cont.env, "BROOD_CONTAINMENT="))[c.key]
					mdl := p.script("consume.yaml", `agents:
  explore:
    - tools:
        - Bash: {command: "python3 consume.py", timeout: 300000}
    - say: "finished"
`)
					ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
					defer cancel()
					start := time.Now()
					res, out := p.subagentResult(ctx, []string{cont.env}, "--model", mdl, "explore", "consume")
					result, _ := res["result"].(map[string]any)
					if !strings.HasPrefix(how, "cgroup") {
						// rlimits only: the command is refused what passes the
						// limit and the child lives on, or (a process limit
						// the bomb used up) the child itself cannot make a
						// thread and ends failed. Either way the bomb never
						// got its processes, nor the hog its memory.
						td := taskdir.Open(p.root).MustTask(fmt.Sprint(res["task_id"]))
						var got string
						if _, err := os.Stat(td.File("session.jsonl")); err == nil {
							got = strings.Join(toolResults(t, td.File("session.jsonl")), "\n")
						}
						refused := strings.Contains(got, c.refused)
						died := got == "" && c.key == "processes" && res["status"] == "failed"
						if (!refused && !died) || strings.Contains(got, "forked 1500") || strings.Contains(got, "survived") {
							t.Fatalf("held by %s: the command was not refused (%q)\n%s", how, got, out)
						}
						t.Logf("held by %s: status %v: %s", how, res["status"], got)
						return
					}
					if res["status"] != "killed" || !strings.Contains(fmt.Sprint(result["error"]), c.want) {
						t.Fatalf("held by %s: outcome %v, want killed with %q\n%s", how, res, c.want, out)
					}
					if row := p.listed()[fmt.Sprint(res["task_id"])]; row["status"] != "killed" {
						t.Errorf("brood tasks lists it as %v", row["status"])
					}
					t.Logf("held by %s: stopped after %v: %v", how, time.Since(start).Round(time.Millisecond), result["error"])
				})
			}
		})
	}
}

// TestSpilledOutputIsCapped (issue 23 case 14): a read-only child running
// `yes` for seconds leaves at most the cap on disk while it runs (head and
// tail, with a line saying what was dropped), the model sees head and tail
// with the drop named, and nothing is left once the run ends.
func TestSpilledOutputIsCapped(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Fatal("no Landlock: read-only agents get no Bash here, and the attack needs it")
	}
	p := newProject(t, map[string]string{"README.md": "# x\n"})
	mdl := p.script("yes.yaml", `agents:
  explore:
    - tools:
        - Bash: {command: "timeout 6 yes; echo the-end"}
    - tools:
        - Bash: {command: 'd=$(dirname "$TMPDIR"); for f in "$d"/bash-output-*.txt; do echo "size=$(stat -c %s "$f")"; echo "marker=$(grep -c "bytes dropped here" "$f")"; done'}
    - say: "flooded"
`)
	res, out := p.subagentResult(t.Context(), nil, "--model", mdl, "explore", "flood")
	if res["status"] != "done" {
		t.Fatalf("outcome %v\n%s", res, out)
	}
	id := fmt.Sprint(res["task_id"])
	td := taskdir.Open(p.root).MustTask(id)
	results := toolResults(t, td.File("session.jsonl"))
	if len(results) != 2 {
		t.Fatalf("want two tool results in the transcript, got %d", len(results))
	}
	flood, sizes := results[0], results[1]
	if !strings.HasPrefix(flood, "y\ny\n") || !strings.Contains(flood, "the-end") || !strings.Contains(flood, "were dropped") {
		t.Errorf("the model did not get head, tail and the drop named: %q ... %q", flood[:min(len(flood), 80)], flood[max(0, len(flood)-600):])
	}
	var size, marker int
	if _, err := fmt.Sscanf(strings.TrimSpace(sizes), "size=%d\nmarker=%d", &size, &marker); err != nil {
		t.Fatalf("the child's look at its spill: %q (%v)", sizes, err)
	}
	if size <= 0 || size > 8<<20 || marker != 1 {
		t.Errorf("the spill file held %d bytes (cap %d) with %d drop markers", size, 8<<20, marker)
	}
	var left int64
	filepath.Walk(td.Path(), func(path string, info os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(info.Name(), "bash-output-") {
			left += info.Size()
			t.Errorf("left after the run: %s (%d bytes)", path, info.Size())
		}
		return nil
	})
	var total int64
	filepath.Walk(td.Path(), func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	if total > 8<<20 {
		t.Errorf("the task directory holds %d bytes after the run", total)
	}
}

// toolResults are the texts of the tool results in a transcript, in order.
func toolResults(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r session.Record
		if len(line) == 0 || json.Unmarshal(line, &r) != nil || r.Message == nil {
			continue
		}
		for _, blk := range r.Message.Content {
			if blk.ToolUseID != "" && blk.Type != "tool_use" {
				out = append(out, blk.Text)
			}
		}
	}
	return out
}

// TestToolNetworkPerAgent: a read-only built-in's Bash cannot connect to a
// loopback TCP server the test runs, while the child itself reaches its
// model on loopback (the whole run goes through it); a definition with
// `network: on` can.
func TestToolNetworkPerAgent(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Fatal("no Landlock: read-only agents get no Bash here, and the attack needs it")
	}
	ln := sandboxtest.Greet(t, "tcp", "127.0.0.1:0", "REACHED-THE-SERVER\n")
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3; echo exit=$?", ln.Addr().(*net.TCPAddr).Port)
	fake := modeltest.NewAnthropic(t)
	fake.SetResponder(func(req modeltest.Recorded) modeltest.Reply {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(req.Body, &body)
		if len(body.Messages) > 0 {
			last := string(body.Messages[len(body.Messages)-1].Content)
			if strings.Contains(last, "tool_result") {
				return modeltest.Reply{Text: "## Result\nthe connection said: " + strings.ReplaceAll(last, "\"", "'")}
			}
		}
		in, _ := json.Marshal(map[string]string{"command": connect})
		return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_net_1", Name: "Bash", Input: string(in)}}}
	})
	p := newProject(t, map[string]string{
		"README.md":                  "# x\n",
		".brood/agents/netreader.md": "---\nname: netreader\ndescription: reads, and may reach the network\ntools: Read, Bash\nsandbox: read-only\nnetwork: on\n---\nYou read.\n",
	})
	env := []string{"ANTHROPIC_BASE_URL=" + fake.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key"}
	for _, c := range []struct {
		agent   string
		reached bool
	}{
		{"explore", false},
		{"netreader", true},
	} {
		t.Run(c.agent, func(t *testing.T) {
			res, out := p.subagentResult(t.Context(), env, "--model", "anthropic/claude-sonnet-4-5", c.agent, "connect")
			if res["status"] != "done" {
				t.Fatalf("the child did not finish through its loopback model: %v\n%s", res, out)
			}
			td := taskdir.Open(p.root).MustTask(fmt.Sprint(res["task_id"]))
			results := toolResults(t, td.File("session.jsonl"))
			if len(results) != 1 {
				t.Fatalf("tool results %q", results)
			}
			if got := strings.Contains(results[0], "REACHED-THE-SERVER"); got != c.reached {
				t.Errorf("%s's Bash reached the server: %v, want %v\n%s", c.agent, got, c.reached, results[0])
			}
		})
	}
}

// TestChildFileSizeIsBounded (redteam19 P3-1): a read-only child that
// writes a file larger than limits.file_size into its TMPDIR is stopped
// at the limit (RLIMIT_FSIZE, on the child and all it starts): dd's write
// past it fails, and the file holds no more than the limit. A child that
// writes in place is held the same way.
func TestChildFileSizeIsBounded(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Fatal("no Landlock: read-only agents get no Bash here, and the attack needs it")
	}
	for _, agent := range []string{"explore", "general-purpose"} {
		t.Run(agent, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# x\n"})
			p.userLimits("file_size = \"4MiB\"\n")
			mdl := p.script("fill.yaml", `agents:
  `+agent+`:
    - tools:
        - Bash: {command: 'dd if=/dev/zero of="$TMPDIR/fill" bs=1M count=12 2>/dev/null; echo "size=$(stat -c %s "$TMPDIR/fill")"'}
    - say: "filled"
`)
			res, out := p.subagentResult(t.Context(), nil, "--model", mdl, "--permission-mode", "bypassPermissions", agent, "fill")
			id := fmt.Sprint(res["task_id"])
			results := toolResults(t, taskdir.Open(p.root).MustTask(id).File("session.jsonl"))
			if len(results) != 1 {
				t.Fatalf("want one tool result in the transcript, got %d\n%s", len(results), out)
			}
			i := strings.Index(results[0], "size=")
			var size int64
			if i < 0 {
				t.Fatalf("the child's look at its file: %q", results[0])
			}
			if _, err := fmt.Sscanf(results[0][i:], "size=%d", &size); err != nil {
				t.Fatalf("the child's look at its file: %q (%v)", results[0], err)
			}
			if size > 4<<20 {
				t.Errorf("the child wrote a file of %d bytes past limits.file_size (4 MiB)", size)
			}
		})
	}
}
