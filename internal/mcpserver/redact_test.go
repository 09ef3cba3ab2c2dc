package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRepliesAreRedacted: a tool's reply, a resource's content and a
// progress message go to the client with the secret replaced by its
// marker, through the real SDK over an in-memory connection.
func TestRepliesAreRedacted(t *testing.T) {
	const secret = `db-"pass"<&>-0123456789`
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED:.env:DB_PASSWORD]") }
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	srv.AddReceivingMiddleware(redacting(redact))
	srv.AddSendingMiddleware(redactNotify(redact))
	srv.AddTool(&mcp.Tool{Name: "Leak", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "read " + secret})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<subagent-result>DB_PASSWORD=" + secret + "</subagent-result>"}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "brood://tasks/x", Name: "x"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "brood://tasks/x", Text: `{"summary":"` + strings.ReplaceAll(secret, `"`, `\"`) + `"}`}}}, nil
	})
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	progress := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progress <- req.Params.Message },
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: "Leak", Arguments: map[string]any{}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if strings.Contains(text, "pass") || !strings.Contains(text, "DB_PASSWORD=[REDACTED:.env:DB_PASSWORD]</subagent-result>") {
		t.Errorf("tool reply = %q", text)
	}
	if msg := <-progress; strings.Contains(msg, "pass") || !strings.Contains(msg, "[REDACTED:.env:DB_PASSWORD]") {
		t.Errorf("progress = %q", msg)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "brood://tasks/x"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.Contents[0].Text; strings.Contains(got, "pass") || !strings.Contains(got, "[REDACTED:.env:DB_PASSWORD]") {
		t.Errorf("resource = %q", got)
	}
}
