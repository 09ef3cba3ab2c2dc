package tui_test

import (
	"fmt"
	"strings"
	"testing"
)

const resultsScript = `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "Quick look", prompt: "Look."}
    - tools:
        - Task: {subagent_type: explore, description: "Background look", prompt: "Look again.", run_in_background: true}
    - say: "LAUNCHED"
    - say: "ANSWERED"
  explore:
    - say: "REPORT-START alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey REPORT-END"
`

// TestTUIResultsForPeople, at 80×24 and 140×45: Ctrl-O shows a subagent's
// whole result wrapped to the window, without the <subagent-result>
// wrapper or the text meant for the model; reopened with --continue, the
// prompt sent after a background task finished stands alone, the notice
// on a line of its own in a person's words. Today's main clipped the
// result at the window's edge, showed the wrapper, and glued "Call
// TaskOutput with task_id=…" onto the prompt line.
func TestTUIResultsForPeople(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {140, 45}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			p := newTUIProject(t, resultsScript, map[string]string{})
			tm := p.openSized(t, sz[0], sz[1])
			tm.typeLine("look twice")
			tm.waitFor("LAUNCHED", "0 running, 2 finished")
			tm.typeLine("what did it find?")
			tm.waitFor("ANSWERED", "ready · ")
			tm.keys("C-o")
			s := tm.waitFor("REPORT-END")
			for _, bad := range []string{"<subagent-result", "trust=", "The block above", "TaskOutput", "task_id="} {
				if strings.Contains(s, bad) {
					t.Errorf("the screen shows %q:\n%s", bad, s)
				}
			}
			for _, w := range strings.Fields("alpha mike whiskey") {
				if !strings.Contains(s, w) {
					t.Errorf("the expanded result is cut: %q missing:\n%s", w, s)
				}
			}
			tm.exit()
			tm.close()

			tm = p.openSized(t, sz[0], sz[1], "--continue")
			s = tm.waitFor("what did it find?", "background task explore")
			if strings.Contains(s, "TaskOutput") || strings.Contains(s, "[brood]") {
				t.Errorf("the reopened session shows the model's notice:\n%s", s)
			}
			for _, l := range strings.Split(s, "\n") {
				if strings.Contains(l, "what did it find?") && strings.TrimSpace(l) != "› what did it find?" {
					t.Errorf("something is glued onto the prompt line: %q", l)
				}
			}
			tm.exit()
		})
	}
}
