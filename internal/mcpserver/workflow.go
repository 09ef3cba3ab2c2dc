package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/workflow"
	"github.com/broodhq/brood/internal/workflowtool"
)

const mcpWorkflowNote = `

Over MCP: the call returns when the run ends. For a run that may outlast your client's per-call timeout, pass run_in_background=true: you get the run_id at once; then call WorkflowStatus with run_id and a wait_seconds below that limit until its status is no longer running.`

func (s *Server) addWorkflowTools() {
	no := false
	s.srv.AddTool(&mcp.Tool{
		Name:        "Workflow",
		Description: s.delegateDescription("Workflow") + mcpWorkflowNote,
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"plan":{"description":"The plan: an object, or its YAML/JSON text"},` +
			`"inputs":{"type":"object","description":"Values for the plan's declared inputs","additionalProperties":true},` +
			`"run_in_background":{"type":"boolean","description":"Return the run_id at once; follow it with WorkflowStatus"}` +
			`},"required":["plan"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Run a brood workflow", OpenWorldHint: &no},
	}, s.workflow)
	s.srv.AddTool(&mcp.Tool{
		Name:        "WorkflowStatus",
		Description: "The status of a brood workflow run by run_id (its phases' counts) and, once it has ended, its result (outputs wrapped as untrusted data). wait_seconds (default 0, at most 600) waits for a running run first; keep it below your client's per-call timeout.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"run_id":{"type":"string","description":"The run_id Workflow returned"},` +
			`"wait_seconds":{"type":"number","description":"How long to wait for a running run (0-600)"}` +
			`},"required":["run_id"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Read a brood workflow run", ReadOnlyHint: true, OpenWorldHint: &no},
	}, s.workflowStatus)
}

func (s *Server) workflow(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Plan       json.RawMessage `json:"plan"`
		Inputs     map[string]any  `json:"inputs"`
		Background bool            `json:"run_in_background"`
	}
	if err := unmarshal(req.Params.Arguments, &in); err != nil || len(in.Plan) == 0 {
		return errorResult("Workflow needs plan (an object or its YAML/JSON text), and optionally inputs"), nil
	}
	src := []byte(in.Plan)
	var text string
	if json.Unmarshal(in.Plan, &text) == nil {
		src = []byte(text)
	}
	d := s.cfg.Dispatcher
	run, err := workflowtool.Request(d, "the MCP Workflow plan", src, in.Inputs)
	if err != nil {
		return errorResult("%v", err), nil
	}
	if in.Background {
		return s.startWorkflow(run)
	}
	prog := newProgress(req)
	run.Events = func(e workflow.Event) { prog.send(ctx, workflowMessage(e)) }
	res, err := workflowtool.Engine(d).Run(ctx, run)
	if err != nil && res == nil {
		return errorResult("%v", err), nil
	}
	return textResult(workflowtool.Render(d, res), res.Status == workflow.RunFailed), nil
}

// startWorkflow runs a plan under the server's lifetime and returns once
// the run is recorded, with its id.
func (s *Server) startWorkflow(run engine.RunRequest) (*mcp.CallToolResult, error) {
	ids := make(chan string, 1)
	errc := make(chan error, 1)
	run.Started = func(id string) { ids <- id }
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_, err := workflowtool.Engine(s.cfg.Dispatcher).Run(s.lifetime(), run)
		errc <- err
	}()
	select {
	case id := <-ids:
		return textResult(fmt.Sprintf("Workflow run %s started in the background (run_id=%q). Follow it with WorkflowStatus(run_id=%q, wait_seconds=N), N below your client's per-call timeout; stop it from a shell with brood workflow cancel %s.", id, id, id, id), false), nil
	case err := <-errc:
		if err == nil {
			err = errors.New("the run ended before it was recorded")
		}
		return errorResult("%v", err), nil
	}
}

func (s *Server) workflowStatus(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		RunID string  `json:"run_id"`
		Wait  float64 `json:"wait_seconds"`
	}
	if err := unmarshal(req.Params.Arguments, &in); err != nil || in.RunID == "" {
		return errorResult("WorkflowStatus needs run_id (from Workflow), and optionally wait_seconds"), nil
	}
	eng := workflowtool.Engine(s.cfg.Dispatcher)
	deadline := time.Now().Add(time.Duration(min(max(in.Wait, 0), 600) * float64(time.Second)))
	for {
		info, err := eng.Show(ctx, in.RunID)
		if err != nil {
			return errorResult("%v", err), nil
		}
		if info.Status != workflow.RunRunning || !time.Now().Before(deadline) {
			return textResult(s.runText(info), false), nil
		}
		// The run may belong to another process: its records are all
		// there is to watch.
		t := time.NewTimer(min(250*time.Millisecond, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func (s *Server) runText(info *engine.RunInfo) string {
	if info.Result != nil && info.Status != workflow.RunRunning {
		return "status: " + info.Status + "\n" + workflowtool.Render(s.cfg.Dispatcher, info.Result)
	}
	return fmt.Sprintf("status: %s\nWorkflow run %s (%s): %d agents, %d done, %d running, %d failed. Call WorkflowStatus again with wait_seconds to wait for it.",
		info.Status, info.RunID, info.Plan, info.Agents, info.Done, info.Running, info.Failed)
}

func workflowMessage(e workflow.Event) string {
	return fmt.Sprintf("phase %s (%s): %s, %d done, %d running, %d failed, %d queued",
		safeName(e.Phase), safeName(e.Shape), safeName(e.Status), e.Done, e.Running, e.Failed, e.Queued)
}
