package trust

import (
	"runtime"
	"strings"
	"testing"
)

// TestLineCommandsLinear: a long pipeline is read in memory linear in its
// length (each element's pipe a suffix of one slice), and a line past
// MaxLineBytes/MaxLineNodes is not walked at all (review evidence3 P1-3:
// `go test ./...` and 5000 `| cat` took 17 s and 20000 took 3 GB).
func TestLineCommandsLinear(t *testing.T) {
	const n = 1500 // under MaxLineNodes
	line := "go test ./..." + strings.Repeat(" | cat", n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cmds, ok := LineCommands(line)
	runtime.ReadMemStats(&after)
	if !ok || len(cmds) != n+1 || len(cmds[0].Pipe) != n {
		t.Fatalf("LineCommands(%d pipes) = %d commands, ok %v", n, len(cmds), ok)
	}
	// A quadratic reading allocates n²/2 pipe entries (18 MB at 16 bytes
	// each) and recomputes n²/2 words; a linear one a few MB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("LineCommands(%d pipes) allocated %d MB, want a linear few", n, got>>20)
	}
	if &cmds[0].Pipe[n-1] != &cmds[n-1].Pipe[0] {
		t.Errorf("the pipes of one pipeline do not share their suffix")
	}
	for _, tc := range []struct{ name, line string }{
		{"20000 pipes", "go test ./..." + strings.Repeat(" | cat", 20000)},
		{"over 64 KiB", "go test ./... # " + strings.Repeat("x", MaxLineBytes)},
		{"3000 pipes in a group", "false && { cat" + strings.Repeat(" | cat", 3000) + "; }"},
	} {
		if _, ok := LineCommands(tc.line); ok {
			t.Errorf("%s: LineCommands ok, want a line too big to read", tc.name)
		}
		if got := StatusCommands(tc.line); got != nil {
			t.Errorf("%s: StatusCommands = %d commands, want none", tc.name, len(got))
		}
		if why := Undermined(tc.line); !strings.Contains(why, "run the tests in a line of their own") {
			t.Errorf("%s: Undermined = %q, want a line too big to read", tc.name, why)
		}
	}
}
