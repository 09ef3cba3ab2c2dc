package tasks_test

import (
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestMain lets the test binary stand in for brood: the tests run brood as
// real child processes by re-executing it.
func TestMain(m *testing.M) { clitest.Main(m) }
