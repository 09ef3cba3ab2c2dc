//go:build !linux

package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPassSealedNeverInTheEnvironment: off Linux a sealed value is not
// passed at all, least of all in the child's environment, which a process
// of the same user may read (review P2-2).
func TestPassSealedNeverInTheEnvironment(t *testing.T) {
	cmd := exec.Command("true")
	if err := PassSealed(cmd, "BROOD_TEST_SEALED", []byte(`["hunter2hunter2"]`)); err != nil {
		t.Fatal(err)
	}
	for _, e := range cmd.Env {
		if strings.Contains(e, "hunter2hunter2") || strings.HasPrefix(e, "BROOD_TEST_SEALED=") {
			t.Errorf("the child's environment holds %q", e)
		}
	}
	if len(cmd.ExtraFiles) != 0 {
		t.Errorf("%d files passed", len(cmd.ExtraFiles))
	}
}
