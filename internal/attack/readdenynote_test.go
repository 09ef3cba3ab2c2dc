package attack_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// streamToolResults are the texts of the tool_result blocks of a
// stream-json run's stdout, in order.
func streamToolResults(t *testing.T, out string) []string {
	t.Helper()
	var res []string
	for _, line := range strings.Split(out, "\n") {
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Content []struct {
					Type    string          `json:"type"`
					Content json.RawMessage `json:"content"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Type != "user" {
			continue
		}
		for _, c := range m.Message.Content {
			if c.Type != "tool_result" {
				continue
			}
			var s string
			if json.Unmarshal(c.Content, &s) == nil {
				res = append(res, s)
				continue
			}
			var parts []struct{ Text string }
			if err := json.Unmarshal(c.Content, &parts); err != nil {
				t.Fatalf("a tool_result whose content is neither text nor parts: %s", c.Content)
			}
			var b strings.Builder
			for _, p := range parts {
				b.WriteString(p.Text)
			}
			res = append(res, b.String())
		}
	}
	return res
}

// TestReadDenyUnexpandedSaidInTaskResult (review40 P1-C): where the kernel
// cannot hide what a child's Read deny rules match, the Task result the
// parent model reads (stream-json's tool_result) says so in brood's
// words, below the child's report: which rules are checked per command
// only, and, under bypassPermissions, that the child may have read what
// they match; `brood tasks show` says it from the parent's verdict. Where
// the kernel holds them, no such line. Read-only
// (explore: warm or cold) and writer children.
func TestReadDenyUnexpandedSaidInTaskResult(t *testing.T) {
	needLandlock(t)
	for _, tc := range []struct {
		name, agent, deny, mode, want string
		track                         bool
	}{
		{name: "a deny for all of Read", agent: "explore", deny: "Read", mode: "default",
			want: `Note: Read deny rules "Read" are not held by the kernel sandbox for this child ("a deny rule for all of Read")`},
		{name: "a tracked file, bypass", agent: "explore", deny: "Read(secrets/**)", mode: "bypassPermissions", track: true,
			want: "under bypassPermissions (this run's mode) every such command runs: it may have read those files"},
		{name: "a writer, a tracked file", agent: "general-purpose", deny: "Read(secrets/**)", mode: "default", track: true,
			want: "under a rule allowing all of Bash or an interpreter, or bypassPermissions, it can read those files"},
		{name: "held", agent: "explore", deny: "Read(secrets/**)", mode: "bypassPermissions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newReadDenyProject(t)
			if tc.track {
				p.git("add", "-f", "secrets/k")
				p.git("commit", "-qm", "a secret")
			}
			mdl := p.script("rd.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+tc.agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+tc.agent+`:
    - say: "nothing to report"
`)
			code, out, errs := p.brood(t.Context(), nil, "run", "-p", "--output-format", "stream-json", "--model", mdl,
				"--permission-mode", tc.mode, "--deny", tc.deny, "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			results := streamToolResults(t, out)
			if len(results) != 1 || !strings.Contains(results[0], "</subagent-result>") {
				t.Fatalf("want one Task tool_result, have %d:\n%s", len(results), out)
			}
			_, below, _ := strings.Cut(results[0], "</subagent-result>")
			ids := p.taskIDs()
			if len(ids) != 1 {
				t.Fatalf("want one task, have %v", ids)
			}
			code, show, errs := p.brood(t.Context(), nil, "tasks", "show", ids[0])
			if code != 0 {
				t.Fatalf("brood tasks show: code %d\n%s\n%s", code, show, errs)
			}
			if tc.want == "" {
				if strings.Contains(results[0], "not held by the kernel sandbox") || strings.Contains(show, "\nsandbox  ") {
					t.Errorf("the Task result or tasks show says the Read denies are not held where the kernel holds them:\n%s\n%s", results[0], show)
				}
				return
			}
			if !strings.Contains(below, tc.want) || !strings.Contains(below, "\nNote: Read deny rules ") {
				t.Errorf("the Task result does not say, below the child's report, that the Read denies are not held (want %q):\n%s", tc.want, results[0])
			}
			if !strings.Contains(show, "\nsandbox  Read deny rules ") || !strings.Contains(show, strings.TrimPrefix(tc.want, "Note: ")) {
				t.Errorf("brood tasks show does not say the Read denies are not held (want %q):\n%s", tc.want, show)
			}
		})
	}
}
