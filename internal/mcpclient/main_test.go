package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/testbrood"
)

// envServer makes this test binary the "notes" MCP server (stdio).
const envServer = "BROOD_MCPTEST_SERVER"

// TestMain makes the test binary one of three programs: the notes MCP
// server, brood itself (the children the dispatcher starts), or the tests.
func TestMain(m *testing.M) {
	if os.Getenv(envServer) == "1" {
		if err := notesServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "notes server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testbrood.Main(m, "BROOD_TEST_MAIN")
}

// notesServer has a read-only tool (echo) and a writing one (write_note,
// which writes note.txt in its working directory). With BROOD_MCPTEST_PID
// set it records its pid there first.
func notesServer() *mcp.Server {
	if p := os.Getenv("BROOD_MCPTEST_PID"); p != "" {
		_ = os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back.", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "Write the text to note.txt.", InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			dir, _ := os.Getwd()
			if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(in.Text), 0o644); err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote note.txt"}}}, nil
		})
	return s
}
