package e2e_test

import (
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
