// Package mcpclient gives a subagent the tools of the MCP servers its
// definition names: it starts them for the child (stdio) or reaches them
// over HTTP, lists their tools, and wraps each as a tool.Tool named
// mcp__<server>__<tool>, which goes through the same permission rules as
// every tool. The servers stop with the child.
package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/tool"
)

// serverTool is one server tool as the model sees it.
type serverTool struct {
	name   string // mcp__server__tool
	server string
	t      *mcp.Tool
	cs     *mcp.ClientSession
	schema json.RawMessage
	// unexpand names the spec's ${VAR}s again in an error that quotes
	// their values (the server's URL with its ?key=).
	unexpand func(string) string
}

func newTool(server string, t *mcp.Tool, cs *mcp.ClientSession) *serverTool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return &serverTool{name: mcpspec.ToolName(server, t.Name), server: server, t: t, cs: cs, schema: schema}
}

func (s *serverTool) Spec() model.ToolSpec {
	desc := s.t.Description
	if desc == "" {
		desc = s.t.Title
	}
	return model.ToolSpec{Name: s.name, Description: desc + " (MCP server " + s.server + ")", Schema: s.schema}
}

// ReadOnly is the server's readOnlyHint: what a read-only agent may get.
func (s *serverTool) ReadOnly() bool { return s.t.Annotations != nil && s.t.Annotations.ReadOnlyHint }

// Rerunnable implements tool.Rerunner: a fleet pick-up never runs an MCP
// call again, whatever the server's readOnlyHint claims.
func (s *serverTool) Rerunnable() bool { return false }

func (s *serverTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) tool.Result {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: s.t.Name, Arguments: input})
	if err != nil {
		msg := err.Error()
		if s.unexpand != nil {
			msg = s.unexpand(msg)
		}
		return tool.Errorf("%s: the MCP server %s failed: %s", s.name, s.server, msg)
	}
	// Redacted, capped and spilled as a command's output is: the server
	// is not brood's, and neither is what it returns.
	if env == nil {
		env = &tool.Env{}
	}
	return tool.Result{Content: env.Output(s.name, render(res)), IsError: res.IsError}
}

// render turns a call's content into text for the model.
func render(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource %s]", c.URI)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(&b, "[resource %s]\n%s", c.Resource.URI, c.Resource.Text)
			}
		default:
			b.WriteString("[content of an unsupported type]")
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	return b.String()
}
