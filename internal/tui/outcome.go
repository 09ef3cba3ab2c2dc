package tui

import (
	"regexp"
	"strings"
	"sync"
)

// A tool call's mark says what happened: ⋯ still running, ✓ done only,
// and for a subagent the way it ended, in a word beside the mark.

// subagentStatus is the status attribute of the <subagent-result> wrapper
// the dispatcher puts first in a Task result (dispatch/wrap.go); the
// child's own text comes after it, defanged, so it cannot forge this one.
var subagentStatus = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<subagent-result [^>\n]*\bstatus="([a-z]+)"`) })

// subagentNotApplied is the wrapper of a call done on its copy whose
// change did not land in the tree (a conflict, a landing that failed, a
// link out of the tree): not-applied, as brood subagent says it, never ✓;
// or landed only in part (a landing that failed partway and could not
// put back all it wrote): partly-applied, ✗.
var subagentNotApplied = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^<subagent-result [^>\n]*\bpatch="(not-applied|partly-applied)"`)
})

// toolOutcome reads how a subagent call ended from its result: its
// status, or "background" for a launch that returns at once; "" for other
// tools.
func toolOutcome(text string) string {
	text = strings.TrimSpace(text)
	m := subagentStatus().FindStringSubmatch(text)
	if p := subagentNotApplied().FindStringSubmatch(text); p != nil && (p[1] == "partly-applied" || m != nil && m[1] == "done") {
		return p[1]
	}
	if m != nil {
		return m[1]
	}
	if strings.HasPrefix(text, "Task ") && strings.Contains(text, " in the background (task_id=") {
		return "background"
	}
	return ""
}

// toolMark is a tool entry's mark and the word beside it.
func toolMark(st styles, e *entry) (mark, word string) {
	if !e.done {
		return st.dim.Render("⋯"), ""
	}
	switch e.outcome {
	case "", "done":
		if e.isError {
			return st.err.Render("✗"), st.err.Render("failed")
		}
		return st.ok.Render("✓"), ""
	case "background":
		return st.dim.Render("↗"), st.dim.Render("running in the background")
	case "failed", "killed", "partly-applied":
		return st.err.Render("✗"), st.err.Render(e.outcome)
	case "cancelled", "interrupted":
		return st.warn.Render("⊘"), st.warn.Render(e.outcome)
	}
	// partial, checkpoint, and any status a newer brood adds.
	return st.warn.Render("◐"), st.warn.Render(e.outcome)
}

// settle marks the tool calls that never got a result as interrupted: the
// turn that made them is over, so no result will come.
func (c *conversation) settle() {
	for _, e := range c.entries {
		if e.kind == entryTool && !e.done {
			e.done, e.outcome, e.cache = true, "interrupted", nil
		}
	}
}
