package tasks

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestShowSaysRefsChanged: the refs an in-place writer made, moved or
// deleted, kept in its parent's verdict, are said by tasks show, one
// line each (redteam19 P1-3).
func TestShowSaysRefsChanged(t *testing.T) {
	var b strings.Builder
	showVerdict(&b, &dispatch.Task{Verdict: &dispatch.Verdict{Status: "done", Accepted: true,
		Refs: []string{"refs/heads/main b4c02ae→9fa698f (rewritten: b4c02ae is not in its history any more)", "refs/tags/v1.0 new (9fa698f)"}}})
	for _, w := range []string{"ref      refs/heads/main b4c02ae→9fa698f (rewritten", "ref      refs/tags/v1.0 new (9fa698f)\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("show does not say %q:\n%s", w, b.String())
		}
	}
}
