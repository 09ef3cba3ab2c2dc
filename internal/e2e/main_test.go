// Package e2e_test holds end-to-end tests of delegation's promises through
// the real CLI: brood runs as a real process (the test binary standing in
// for it), dispatches real child processes, and the tests read what a user
// would see and what is on disk.
package e2e_test

import (
	"testing"

	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_E2E_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

func newProject(t *testing.T, files map[string]string) *testbrood.Project {
	t.Helper()
	return testbrood.NewProject(t, mainEnv, files)
}

func writeSettings(t *testing.T, root, toml string) {
	t.Helper()
	testbrood.WriteFile(t, root+"/.brood/settings.toml", toml)
}
