package version_test

import (
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

func TestVersion(t *testing.T) {
	p := clitest.NewProject(t)
	code, out, errOut := p.Brood("version")
	if code != 0 || out != "brood dev\n" || errOut != "" {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}
