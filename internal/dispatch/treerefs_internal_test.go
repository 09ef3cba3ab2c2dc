package dispatch

import (
	"strings"
	"testing"
)

// TestRefsLineIsBounded (review commithide P2-2): ten thousand tags a child
// made reach the parent model as fifty and a count.
func TestRefsLineIsBounded(t *testing.T) {
	var refs []string
	for i := range 10000 {
		refs = append(refs, "refs/tags/t"+strings.Repeat("x", i%7)+" new (abc1234)")
	}
	line := RefsLine(refs, 50)
	if strings.Count(line, "refs/tags/") != 50 || !strings.Contains(line, "and 9950 more") {
		t.Errorf("line (%d bytes) = %.200q…", len(line), line)
	}
	if got := RefsLine(refs[:3], 50); strings.Count(got, ";") != 2 || strings.Contains(got, "more") {
		t.Errorf("a short list = %q", got)
	}
}

// TestNotFetched (review commithide P2-1): a remote-tracking ref a fetch
// moved does not count against a read-only child; every other ref does.
func TestNotFetched(t *testing.T) {
	in := []string{"refs/remotes/origin/main a→b", "refs/tags/v1 new (c)", "lib: refs/remotes/up/x new (d)", "lib: refs/heads/main a→b", "HEAD detached"}
	got := strings.Join(NotFetched(in), "|")
	if got != "refs/tags/v1 new (c)|lib: refs/heads/main a→b|HEAD detached" {
		t.Errorf("NotFetched = %q", got)
	}
}
