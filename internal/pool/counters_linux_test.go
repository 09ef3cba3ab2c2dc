package pool

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCounterFileReadsAfreshUntilClosed: a kept-open events file gives
// what the file says now at every read (the kernel rewrites it in place),
// and nothing once closed, without being opened again.
func TestCounterFileReadsAfreshUntilClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pids.events")
	var c counterFile
	for _, tc := range []struct {
		body string
		want int64
	}{
		{"", 0},
		{"max 0\n", 0},
		{"max 3\n", 3},
		{"oom 1\nmax 12\n", 12},
	} {
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := c.count(path, "max"); got != tc.want {
			t.Fatalf("%q: %d, want %d", tc.body, got, tc.want)
		}
	}
	if !c.open {
		t.Fatal("the file was not kept open")
	}
	c.close()
	if got := c.count(path, "max"); got != 0 || c.open {
		t.Fatalf("after close: %d, open %v", got, c.open)
	}
	var never counterFile
	if got := never.count(filepath.Join(t.TempDir(), "absent"), "max"); got != 0 {
		t.Fatalf("a missing file counted %d", got)
	}
}
