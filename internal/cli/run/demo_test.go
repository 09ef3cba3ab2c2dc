package run_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestDemo runs `brood demo` end to end: the root agent uses the real
// tools, then three subagents run as real child processes (this binary,
// re-executed as brood).
func TestDemo(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1") // children are re-executions of this binary
	t.Setenv("HOME", p.Home)           // and must not read the real user's agents
	code, out, errOut := p.Brood("demo")
	if code != 0 {
		t.Fatalf("code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, w := range []string{"Three subagents ran in parallel", "Documentation survey:", "README.md", "Entry points:", "main.go", "Onboarding plan:"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "untrusted") == false {
		t.Errorf("the children's results are not marked untrusted:\n%s", out)
	}
	for _, w := range []string{"▸ Task", "[explore ", "[plan ", "done after 3 turns", "subagents in"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	// The count is of the top level, not of everything below it (LS lists
	// recursively).
	top, err := os.ReadDir(p.Root)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("Listed the top level (%d entries).", len(top)); !strings.Contains(out, want) {
		t.Errorf("the demo does not say %q:\n%s", want, out+errOut)
	}
	st := clitest.ReplayValid(t, clitest.SessionFiles(t, p.Root)[0])
	if st.Status != "done" || st.Turns != 3 {
		t.Errorf("demo transcript: status %q, %d turns", st.Status, st.Turns)
	}
}
