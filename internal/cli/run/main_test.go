package run_test

import (
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/mcpclient/mcptest"
)

// TestMain lets the test binary stand in for brood: the tests run brood as
// real child processes by re-executing it. It is also the notes MCP server
// when asked (mcptest), for --mcp-config.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	clitest.Main(m)
}
