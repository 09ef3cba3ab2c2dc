package tui_test

import (
	"fmt"
	"strings"
	"testing"
)

// treeScript fans out eight quick looks, then starts a long task in the
// background: the newest task is the one running.
func treeScript() string {
	var b strings.Builder
	b.WriteString("agents:\n  root:\n    - tools:\n")
	for i := range 8 {
		fmt.Fprintf(&b, "        - Task: {subagent_type: explore, description: \"Quick look %d\", prompt: \"Look %d.\"}\n", i, i)
	}
	b.WriteString(`    - tools:
        - Task: {subagent_type: general-purpose, description: "Long think", prompt: "Think.", run_in_background: true, isolation: none}
    - say: "STARTED-LONG"
  explore:
    - say: "looked"
  general-purpose:
    - say: "thinking for an hour"
      delay: 1h
`)
	return b.String()
}

// TestTUITreeRunningFirst, at 80×24 and 140×45: the running task is the
// tree's first row, with its description, though eight finished ones
// started before it; at 80×24 the rest is counted in an "n more" line and
// reached from the keyboard; /clear drops the finished rows and keeps the
// running one. Today's main showed the oldest first and cut the tree
// without a word, and /clear kept every row.
func TestTUITreeRunningFirst(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {140, 45}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			p := newTUIProject(t, treeScript(), map[string]string{})
			tm := p.openSized(t, sz[0], sz[1])
			tm.typeLine("look around")
			s := tm.waitFor("STARTED-LONG", "1 running, 8 finished")
			rows := treeRows(s)
			if len(rows) == 0 || !strings.Contains(rows[0], "general-purpose") || !strings.Contains(rows[0], "running") ||
				!strings.Contains(rows[0], "Long think") {
				t.Fatalf("the running task is not the first row:\n%s", s)
			}
			if !strings.Contains(s, "Quick look") {
				t.Errorf("the finished rows do not show their descriptions:\n%s", s)
			}
			if sz[0] == 80 {
				if !strings.Contains(rows[len(rows)-1], "more") {
					t.Fatalf("no line says how many tasks are out of view:\n%s", s)
				}
				tm.keys("C-t")
				tm.waitFor("x kill")
				for range 9 {
					tm.keys("Down")
				}
				tm.waitFor("more above")
				tm.keys("Escape")
				tm.waitFor("(Ctrl-T to select)")
			}
			tm.typeLine("/clear")
			s = tm.waitFor("1 running, 0 finished")
			if strings.Contains(s, "Quick look") || !strings.Contains(s, "Long think") {
				t.Errorf("/clear did not drop the finished rows and keep the running one:\n%s", s)
			}
			tm.typeLine("/exit")
			tm.waitFor("BROOD-EXITED")
		})
	}
}

// treeRows are the screen's rows under the tree's header, up to the input
// line.
func treeRows(screen string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.HasPrefix(l, "── subagents:"):
			in = true
		case in && (strings.HasPrefix(l, "›") || strings.HasPrefix(l, "┌")):
			return out
		case in:
			out = append(out, l)
		}
	}
	return out
}
