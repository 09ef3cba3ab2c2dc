package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// protocolVersion is the MCP revision brood asks for; a server may answer
// with any of versions, all of which brood's use (tools listed and
// called) is the same in.
const protocolVersion = "2025-11-25"

var versions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// mcpTool is a tool as tools/list gives it.
type mcpTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations *struct {
		ReadOnlyHint bool `json:"readOnlyHint"`
	} `json:"annotations"`
}

// callResult is a tools/call result.
type callResult struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// content is one part of a result: text, image, audio, resource_link or
// resource (an embedded one).
type content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"` // base64
	MIMEType string `json:"mimeType"`
	URI      string `json:"uri"`
	Resource *struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"resource"`
}

// open is MCP's handshake (initialize, then notifications/initialized)
// and the server's tools, every page of them.
func (c *conn) open(ctx context.Context, version string) ([]mcpTool, error) {
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	params := map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{"roots": map[string]any{"listChanged": true}},
		"clientInfo":      map[string]string{"name": "brood", "version": version},
	}
	if err := c.call(ctx, "initialize", params, &init); err != nil {
		return nil, fmt.Errorf("cannot connect: %w", err)
	}
	if !slices.Contains(versions, init.ProtocolVersion) {
		return nil, fmt.Errorf("cannot connect: the server speaks MCP %q, which brood does not (it speaks %v)", init.ProtocolVersion, versions)
	}
	if w, ok := c.w.(*streamableWire); ok {
		w.setVersion(init.ProtocolVersion)
	}
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, fmt.Errorf("cannot connect: %w", err)
	}
	var tools []mcpTool
	cursor := ""
	for page := 0; ; page++ {
		var res struct {
			Tools      []mcpTool `json:"tools"`
			NextCursor string    `json:"nextCursor"`
		}
		var p any
		if cursor != "" {
			p = map[string]string{"cursor": cursor}
		}
		if err := c.call(ctx, "tools/list", p, &res); err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		if page >= 1000 || res.NextCursor == cursor {
			return nil, fmt.Errorf("listing tools: the server's pages do not end (cursor %q)", res.NextCursor)
		}
		cursor = res.NextCursor
	}
}

// schemaOf is a tool's input schema as the model is given it: an object
// schema, the server's if it sent one.
func schemaOf(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return json.RawMessage(`{"type":"object"}`)
	}
	return raw
}
