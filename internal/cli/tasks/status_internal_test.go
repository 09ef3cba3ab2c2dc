package tasks

import "testing"

// TestStatusIsTakesTheWordBeforeWhy: --status queued finds a fleet task
// whose status says why it is queued; no other status matches by prefix.
func TestStatusIsTakesTheWordBeforeWhy(t *testing.T) {
	cases := []struct {
		status, want string
		match        bool
	}{
		{"queued (no worker is polling task queue qa)", "queued", true},
		{"queued (waiting for a free worker on task queue qa)", "QUEUED", true},
		{"running", "running", true},
		{"queued (no worker is polling task queue qa)", "running", false},
		{"done", "do", false},
	}
	for _, c := range cases {
		if got := statusIs(c.status, c.want); got != c.match {
			t.Errorf("statusIs(%q, %q) = %v; want %v", c.status, c.want, got, c.match)
		}
	}
}
