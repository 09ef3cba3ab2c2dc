package e2e_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestChildPromptAndTmpdir: the brief is under YOUR TASK, a child without
// the Task tool is not told it may delegate (one with it is), and every
// child's TMPDIR is its own directory inside its task directory.
func TestChildPromptAndTmpdir(t *testing.T) {
	const script = `
agents:
  general-purpose:
    - tools:
        - Bash: {command: "echo scratch > \"$TMPDIR/x\" && echo \"tmp=$TMPDIR\""}
    - say: "{{result 0}}\n{{.System}}"
`
	for _, depth := range []string{"1", "2"} {
		t.Run("maxSubagentDepth="+depth, func(t *testing.T) {
			p := newProject(t, nil)
			model := p.Script("s.yaml", script)
			writeSettings(t, p.Root, "maxSubagentDepth = "+depth+"\n")
			_, stdout, stderr := p.Brood(t.Context(), []string{"BROOD_TRUST_PROJECT=1"}, "subagent", "general-purpose", "--allow", "Bash", "--model", model,
				"--description", "the label", "THE-BRIEF-LINE-1\nsecond line of the brief")
			if !regexp.MustCompile(`YOUR TASK \(the label\)[^\n]*:\nTHE-BRIEF-LINE-1\nsecond line of the brief`).MatchString(stdout) {
				t.Fatalf("the brief is not under YOUR TASK\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			tmp := regexp.MustCompile(`tmp=(\S+)`).FindStringSubmatch(stdout)
			if tmp == nil || !strings.Contains(tmp[1], "/.brood/dispatch/") || !strings.HasSuffix(tmp[1], "/tmp") {
				t.Fatalf("TMPDIR is not the task's own directory: %v\nstdout:\n%s", tmp, stdout)
			}
			hasTask := strings.Contains(stdout, "with the Task tool")
			if want := depth == "2"; hasTask != want {
				t.Fatalf("delegation advice in the prompt = %v, want %v (maxSubagentDepth %s)\n%s", hasTask, want, depth, stdout)
			}
		})
	}
}

// TestStaleReadWarning: when a child changes a file the parent read earlier
// in its conversation, the Task result says so.
func TestStaleReadWarning(t *testing.T) {
	const script = `
agents:
  root:
    - tools: [{Read: {file_path: "README.md"}}, {Read: {file_path: "main.go"}}]
    - tools:
        - Task: {subagent_type: general-purpose, description: "edit the readme", prompt: "Add a line to README.md."}
    - say: "{{result 0}}"
  general-purpose:
    - tools: [{Edit: {file_path: "README.md", old_string: "# Sample", new_string: "# Sample\nMore."}}]
    - say: "## What I did\nEdited README.md.\n\n## What I found\nok\n\n## Files changed\nREADME.md\n\n## Problems\nnone"
`
	p := newProject(t, nil)
	_, stdout, stderr := p.Brood(t.Context(), nil, "run", "--model", p.Script("s.yaml", script), "--allow", "Edit", "edit it")
	if !strings.Contains(stdout, "Stale: you read README.md earlier in this conversation and the subagent changed it since") {
		t.Fatalf("no stale-read warning\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if strings.Contains(stdout, "Stale: you read main.go") {
		t.Fatalf("main.go was not changed but is called stale\n%s", stdout)
	}
}

// TestLongSummaryReadableInPieces: a summary over the inline limit is cut
// with a note naming a plain-text file that holds the whole of it, which
// the parent's Read tool reads in pieces.
func TestLongSummaryReadableInPieces(t *testing.T) {
	var long strings.Builder
	for i := range 400 {
		fmt.Fprintf(&long, "line %03d of a long report\\n", i)
	}
	p := newProject(t, nil)
	writeSettings(t, p.Root, "[results]\ninline_limit = 2000\n")
	const s = `
agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "long report", prompt: "Report at length."}
    - say: "{{result 0}}"
  explore:
    - say: "`
	_, stdout, stderr := p.Brood(t.Context(), []string{"BROOD_TRUST_PROJECT=1"}, "run", "--model", p.Script("s.yaml", s+long.String()+"\"\n"), "report")
	m := regexp.MustCompile(`the whole summary is in (\S+): Read it in pieces`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("the cut note names no readable file\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	b, err := os.ReadFile(m[1])
	if err != nil || strings.Count(string(b), "\n") < 399 || !strings.Contains(string(b), "line 399 of a long report") {
		t.Fatalf("%s does not hold the whole summary as text: %v\n%.200s", m[1], err, b)
	}
	// TaskOutput from the records (another process) names the same copy.
	id := regexp.MustCompile(`task-id="([^"]+)"`).FindStringSubmatch(stdout)
	if id == nil {
		t.Fatalf("no task id in\n%s", stdout)
	}
	_, out, errOut := p.Brood(t.Context(), []string{"BROOD_TRUST_PROJECT=1"}, "tasks", "output", id[1])
	if !strings.Contains(out, "the whole summary is in "+m[1]+": Read it in pieces") || strings.Contains(out, "result.json]") {
		t.Fatalf("tasks output does not name %s\nstdout:\n%s\nstderr:\n%s", m[1], out, errOut)
	}
}
