// Package mcptest is a small MCP server for tests: "notes", with a
// read-only tool (echo), a writing one (write_note) and, when asked, a
// permission prompt tool (approve). A test binary
// becomes the server when EnvServer is set (see Serve), so tests start it as
// a real stdio server process. Only tests import it.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvServer makes a test binary the notes server; EnvPID names a file the
// server writes its pid to first.
const (
	EnvServer = "BROOD_MCPTEST_SERVER"
	EnvPID    = "BROOD_MCPTEST_PID"
	// EnvDial adds the dial tool when "1".
	EnvDial = "BROOD_MCPTEST_DIAL"
	// EnvApprove adds the approve tool (a permission prompt tool) when "1".
	EnvApprove = "BROOD_MCPTEST_APPROVE"
)

// ServeIfAsked runs the notes server on stdio and exits when EnvServer is
// "1"; otherwise it returns at once. Call it first in TestMain.
func ServeIfAsked() {
	if os.Getenv(EnvServer) != "1" {
		return
	}
	if err := Notes().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "notes server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Notes is the notes server: echo (readOnlyHint) returns "echo: TEXT";
// has_env (readOnlyHint) says whether the variable TEXT is set; dial
// (with EnvDial) opens a TCP connection; write_note
// writes TEXT to note.txt in its working directory.
func Notes() *mcp.Server {
	if p := os.Getenv(EnvPID); p != "" {
		_ = os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back.", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("echo: " + arg(req)), nil
		})
	s.AddTool(&mcp.Tool{Name: "has_env", Description: "Whether the environment variable named text is set.", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if os.Getenv(arg(req)) == "" {
				return text(arg(req) + " is unset"), nil
			}
			return text(arg(req) + " is set"), nil
		})
	if os.Getenv(EnvDial) == "1" {
		addDial(s, schema)
	}
	if os.Getenv(EnvApprove) == "1" {
		addApprove(s)
	}
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "Write the text to note.txt.", InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			dir, _ := os.Getwd()
			if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(arg(req)), 0o644); err != nil {
				r := text(err.Error())
				r.IsError = true
				return r, nil
			}
			return text("wrote note.txt"), nil
		})
	return s
}

func arg(req *mcp.CallToolRequest) string {
	var in struct{ Text string }
	_ = json.Unmarshal(req.Params.Arguments, &in)
	return in.Text
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// addDial adds dial (readOnlyHint): it opens a TCP connection to the
// address TEXT and says how it went ("dial: connected" or "dial: ERROR").
func addDial(s *mcp.Server, schema json.RawMessage) {
	s.AddTool(&mcp.Tool{Name: "dial", Description: "Open a TCP connection to the address text (host:port).", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, err := net.DialTimeout("tcp", arg(req), 5*time.Second)
			if err != nil {
				return text("dial: " + err.Error()), nil
			}
			c.Close()
			return text("dial: connected"), nil
		})
}

// addApprove adds approve, a permission prompt tool as Claude Code's
// --permission-prompt-tool calls one ({tool_name, input, tool_use_id}):
// it denies a call whose input mentions "forbidden" ({behavior: deny,
// message}), allows a Write with its content replaced by "APPROVED
// <tool_use_id>\n" ({behavior: allow, updatedInput}), and allows anything
// else as asked.
func addApprove(s *mcp.Server) {
	schema := json.RawMessage(`{"type":"object","properties":{"tool_name":{"type":"string"},"input":{"type":"object"},"tool_use_id":{"type":"string"}},"required":["tool_name","input"]}`)
	s.AddTool(&mcp.Tool{Name: "approve", Description: "Decide a permission prompt.", InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				ToolName  string         `json:"tool_name"`
				Input     map[string]any `json:"input"`
				ToolUseID string         `json:"tool_use_id"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			raw, _ := json.Marshal(in.Input)
			var answer any
			switch {
			case strings.Contains(string(raw), "forbidden"):
				answer = map[string]any{"behavior": "deny", "message": "approve says no to " + in.ToolName}
			case in.ToolName == "Write":
				in.Input["content"] = "APPROVED " + in.ToolUseID + "\n"
				answer = map[string]any{"behavior": "allow", "updatedInput": in.Input}
			default:
				answer = map[string]any{"behavior": "allow", "updatedInput": in.Input}
			}
			b, _ := json.Marshal(answer)
			return text(string(b)), nil
		})
}
