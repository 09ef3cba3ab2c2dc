package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/dispatch"
)

const (
	tasksURI  = "brood://tasks"
	taskURI   = "brood://tasks/{id}"
	agentsURI = "brood://agents"
)

func (s *Server) addResources() {
	s.srv.AddResource(&mcp.Resource{
		URI: tasksURI, Name: "tasks", Title: "brood dispatch records",
		Description: "Every subagent task of this project, newest last: id, agent, status, label, depth, parent, duration, tokens.",
		MIMEType:    "application/json",
	}, s.readTasks)
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: taskURI, Name: "task", Title: "one brood task",
		Description: "One subagent task: its status, its verified result (wrapped as untrusted data) and its dispatch log.",
		MIMEType:    "application/json",
	}, s.readTask)
	s.srv.AddResource(&mcp.Resource{
		URI: agentsURI, Name: "agents", Title: "brood agent registry",
		Description: "The agent types Task can dispatch, as ListAgents returns them.",
		MIMEType:    "application/json",
	}, s.readAgents)
}

// taskRow is one line of brood://tasks: the parent's view, no child text.
type taskRow struct {
	ID       string `json:"id"`
	Agent    string `json:"agent"`
	Status   string `json:"status"`
	Label    string `json:"description,omitempty"`
	Created  string `json:"created"`
	Depth    int    `json:"depth"`
	Parent   string `json:"parent_task_id,omitempty"`
	Duration int64  `json:"duration_ms,omitempty"`
	Tokens   int64  `json:"tokens"`
	URI      string `json:"uri"`
}

func (s *Server) readTasks(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	tasks, err := dispatch.ListTasks(s.cfg.ProjectRoot)
	if err != nil {
		return nil, err
	}
	rows := []taskRow{}
	for _, t := range tasks {
		rows = append(rows, taskRow{
			ID: t.ID, Agent: t.Agent, Status: t.Status, Label: dispatch.Defang(t.Label),
			Created: t.Created.UTC().Format("2006-01-02T15:04:05Z"), Depth: t.Depth, Parent: t.Parent,
			Duration: t.Duration, Tokens: t.Tokens, URI: "brood://tasks/" + t.ID,
		})
	}
	return jsonResource(req.Params.URI, rows)
}

// taskView is brood://tasks/{id}.
type taskView struct {
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Status string `json:"status"`
	// Result is what TaskOutput returns: the verified summary wrapped in
	// <subagent-result ... trust="untrusted">, or a note while it runs.
	Result string        `json:"result"`
	Log    *dispatch.Log `json:"log,omitempty"`
}

func (s *Server) readTask(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, "brood://tasks/")
	if !ok || dispatch.CheckID(id) != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	t, err := dispatch.LoadTask(s.cfg.ProjectRoot, id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	status, text, err := s.cfg.Dispatcher.Output(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	return jsonResource(uri, taskView{ID: t.ID, Agent: t.Agent, Status: status, Result: text, Log: t.Log})
}

func (s *Server) readAgents(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return jsonResource(req.Params.URI, s.agents())
}

// agentRow is one agent as ListAgents and brood://agents show it.
type agentRow struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tools       []string `json:"tools"`
	AllTools    bool     `json:"all_tools,omitempty"`
	ReadOnly    bool     `json:"read_only"`
	Model       string   `json:"model,omitempty"`
	Source      string   `json:"source"`
	Path        string   `json:"path"`
}

func (s *Server) agents() []agentRow {
	rows := []agentRow{}
	for _, d := range s.cfg.Registry.All() {
		if d.Unresolvable {
			continue
		}
		rows = append(rows, agentRow{
			Name: d.Name, Description: d.Description, Tools: d.Tools, AllTools: d.AllTools,
			ReadOnly: d.ReadOnly, Model: d.Model, Source: string(d.Source), Path: d.Path,
		})
	}
	return rows
}

func jsonResource(uri string, v any) (*mcp.ReadResourceResult, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}
