package mcpclient_test

import (
	"testing"

	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestMain makes the test binary one of three programs: the notes MCP
// server (mcptest), brood itself (the children the dispatcher starts), or
// the tests.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	testbrood.Main(m, "BROOD_TEST_MAIN")
}
