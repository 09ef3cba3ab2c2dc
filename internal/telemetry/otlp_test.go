package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_TELEMETRY_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

// receiver is a small OTLP/HTTP endpoint: it decodes what the exporters
// send (protobuf) and keeps the spans and the metric names.
type receiver struct {
	mu        sync.Mutex
	spans     []*tracepb.Span
	metrics   map[string]bool
	resources []*resourcepb.Resource
	points    map[string][]*metricpb.NumberDataPoint // sums, by metric name
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			rc.resources = append(rc.resources, rs.Resource)
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		resp = &coltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req colmetric.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		rc.mu.Lock()
		for _, rm := range req.ResourceMetrics {
			rc.resources = append(rc.resources, rm.Resource)
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					rc.metrics[m.Name] = true
					if sum := m.GetSum(); sum != nil && rc.points != nil {
						rc.points[m.Name] = append(rc.points[m.Name], sum.DataPoints...)
					}
				}
			}
		}
		rc.mu.Unlock()
		resp = &colmetric.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

const fanOut = `
agents:
  root:
    - tools:
        - Task: {subagent_type: lead, description: "lead the scouts", prompt: "lead"}
        - Task: {subagent_type: scout, description: "scout alone", prompt: "alone"}
    - say: "root done"
  lead:
    - tools:
        - Task: {subagent_type: scout, description: "scout one", prompt: "one"}
        - Task: {subagent_type: scout, description: "scout two", prompt: "two"}
    - say: "lead done"
  scout:
    - tools: [{Read: {file_path: README.md}}]
    - say: "scouted"
`

func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

func str(s *tracepb.Span, key string) string { return attr(s, key).GetStringValue() }

// TestSpanTreeOfNestedFanOut runs a real nested fan-out (root → lead →
// two scouts, and a scout of the root's own) as real processes exporting
// to a loopback OTLP/HTTP receiver, and checks the span tree: one trace,
// each child's invoke_agent below the Task call's execute_tool span of its
// parent across the process boundary, chat and execute_tool below each
// agent, the GenAI attributes, and both GenAI metrics.
func TestSpanTreeOfNestedFanOut(t *testing.T) {
	rc := &receiver{metrics: map[string]bool{}, points: map[string][]*metricpb.NumberDataPoint{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	p := testbrood.NewProject(t, mainEnv, nil)
	for name, body := range map[string]string{
		"lead":  "---\nname: lead\ndescription: leads\ndelegate: [scout]\n---\nYou lead.\n",
		"scout": "---\nname: scout\ndescription: reads\ntools: Read\n---\nYou read.\n",
	} {
		testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", name+".md"), body)
	}
	spec := p.Script("fan.yaml", fanOut)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "maxSubagentDepth = 2\n\n[prices.script]\ninput = 3\noutput = 15\n")
	p.Env = append(p.Env, "BROOD_TRUST_PROJECT=1") // the project's settings raise the depth
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"},
		"run", "--model", spec, "fan out")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	byID := map[string]*tracepb.Span{}
	var names []string
	for _, s := range rc.spans {
		byID[string(s.SpanId)] = s
		names = append(names, s.Name)
	}
	count := func(name string) int {
		return len(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n != name }))
	}
	for name, n := range map[string]int{"invoke_agent root": 1, "invoke_agent lead": 1, "invoke_agent scout": 3, "execute_tool Task": 4, "execute_tool Read": 3, "chat script": 2 + 2 + 3*2} {
		if got := count(name); got != n {
			t.Errorf("%d %q spans, want %d; all: %v", got, name, n, names)
		}
	}
	parent := func(s *tracepb.Span) *tracepb.Span { return byID[string(s.ParentSpanId)] }
	trace := string(rc.spans[0].TraceId)
	for _, s := range rc.spans {
		if string(s.TraceId) != trace {
			t.Errorf("%s is in another trace", s.Name)
		}
		switch {
		case s.Name == "invoke_agent root":
			if len(s.ParentSpanId) != 0 || attr(s, "brood.depth").GetIntValue() != 0 {
				t.Errorf("the root's span has a parent or depth: %v", s)
			}
		case strings.HasPrefix(s.Name, "invoke_agent "):
			// A child: below the Task call of its parent, in the parent's run.
			call := parent(s)
			if call == nil || call.Name != "execute_tool Task" {
				t.Errorf("%s is not below a Task call: parent %v", s.Name, call)
				continue
			}
			want := "invoke_agent root"
			if s.Name == "invoke_agent scout" && attr(s, "brood.depth").GetIntValue() == 2 {
				want = "invoke_agent lead"
			}
			if pa := parent(call); pa == nil || pa.Name != want {
				t.Errorf("%s (depth %d): its Task call is not in %s", s.Name, attr(s, "brood.depth").GetIntValue(), want)
			}
			if str(call, "brood.task.status") != "done" || str(call, "brood.task.id") != str(s, "gen_ai.agent.id") {
				t.Errorf("Task call of %s: status %q, task %q, agent id %q", s.Name, str(call, "brood.task.status"), str(call, "brood.task.id"), str(s, "gen_ai.agent.id"))
			}
		case strings.HasPrefix(s.Name, "chat "), strings.HasPrefix(s.Name, "execute_tool "):
			if pa := parent(s); pa == nil || !strings.HasPrefix(pa.Name, "invoke_agent ") {
				t.Errorf("%s is not below an agent", s.Name)
			}
		}
		if strings.HasPrefix(s.Name, "invoke_agent ") {
			if str(s, "gen_ai.operation.name") != "invoke_agent" || str(s, "gen_ai.provider.name") == "" || str(s, "brood.task.status") != "done" || attr(s, "gen_ai.usage.input_tokens") == nil {
				t.Errorf("%s attributes: %v", s.Name, s.Attributes)
			}
		}
		if strings.HasPrefix(s.Name, "chat ") && (str(s, "gen_ai.operation.name") != "chat" || attr(s, "gen_ai.usage.output_tokens").GetIntValue() <= 0) {
			t.Errorf("%s attributes: %v", s.Name, s.Attributes)
		}
	}
	for _, m := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "brood.cost.usage",
		"claude_code.token.usage", "claude_code.cost.usage", "claude_code.session.count"} {
		if !rc.metrics[m] {
			t.Errorf("metric %s not received (got %v)", m, rc.metrics)
		}
	}
	checkClaudeCodeMetrics(t, rc)
	checkResources(t, rc)
}

// checkClaudeCodeMetrics: Claude Code's metrics carry its attributes
// (token usage by type and bare model id) and a priced model costs more
// than nothing.
func checkClaudeCodeMetrics(t *testing.T, rc *receiver) {
	t.Helper()
	types := map[string]bool{}
	for _, dp := range rc.points["claude_code.token.usage"] {
		types[pointAttr(dp, "type")] = true
		if m := pointAttr(dp, "model"); m != "script" {
			t.Errorf("claude_code.token.usage model = %q, want the bare model id", m)
		}
	}
	for _, k := range []string{"input", "output", "cacheRead", "cacheCreation"} {
		if !types[k] {
			t.Errorf("claude_code.token.usage has no type=%s point (got %v)", k, types)
		}
	}
	var usd float64
	for _, dp := range rc.points["claude_code.cost.usage"] {
		usd += dp.GetAsDouble()
	}
	if usd <= 0 {
		t.Errorf("claude_code.cost.usage sums to %v, want more than 0 at [prices.script]", usd)
	}
	sessions := int64(0)
	for _, dp := range rc.points["claude_code.session.count"] {
		sessions += dp.GetAsInt()
	}
	if sessions != 1 {
		t.Errorf("claude_code.session.count = %d, want 1 (the root's session; children are not sessions)", sessions)
	}
}

func pointAttr(dp *metricpb.NumberDataPoint, key string) string {
	for _, a := range dp.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// checkResources: every exporting process says which instance and pid it
// is, and the processes of the run (the root and its children) are told
// apart.
func checkResources(t *testing.T, rc *receiver) {
	t.Helper()
	ids := map[string]bool{}
	for _, r := range rc.resources {
		var id string
		var pid int64
		for _, a := range r.GetAttributes() {
			switch a.Key {
			case "service.instance.id":
				id = a.Value.GetStringValue()
			case "process.pid":
				pid = a.Value.GetIntValue()
			}
		}
		if id == "" || pid <= 0 {
			t.Errorf("a resource without service.instance.id or process.pid: %v", r.GetAttributes())
		}
		ids[id] = true
	}
	if len(ids) < 2 {
		t.Errorf("%d service instances, want one per exporting process (the root and its children): %v", len(ids), ids)
	}
}

// TestWorkflowSpan: a workflow run is one invoke_workflow span, and the
// agents of its phases hang below it.
func TestWorkflowSpan(t *testing.T) {
	rc := &receiver{metrics: map[string]bool{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	p := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), "---\nname: scout\ndescription: reads\ntools: Read\n---\nYou read.\n")
	spec := p.Script("fan.yaml", fanOut)
	// The scripted model in the environment: in the project's settings a
	// script: model waits for trust.
	p.Env = append(p.Env, "BROOD_MODEL="+spec)
	testbrood.WriteFile(t, filepath.Join(p.Root, "survey.yaml"), "name: survey\nphases:\n  - id: look\n    parallel: [{agent: scout, prompt: \"one\"}, {agent: scout, prompt: \"two\"}]\n")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + srv.URL + "/v1/traces"}, "workflow", "run", "--yes", "survey.yaml")
	if code != 0 {
		t.Fatalf("workflow run: %d\n%s\n%s", code, out, errOut)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var wf *tracepb.Span
	for _, s := range rc.spans {
		if s.Name == "invoke_workflow survey" {
			wf = s
		}
	}
	if wf == nil || str(wf, "gen_ai.operation.name") != "invoke_workflow" || str(wf, "brood.task.status") == "" {
		t.Fatalf("no invoke_workflow span: %v", rc.spans)
	}
	below := 0
	for _, s := range rc.spans {
		if s.Name == "invoke_agent scout" && string(s.ParentSpanId) == string(wf.SpanId) && string(s.TraceId) == string(wf.TraceId) {
			below++
		}
	}
	if below != 2 {
		t.Errorf("%d scouts below the workflow span, want 2", below)
	}
	if len(rc.metrics) != 0 {
		t.Errorf("metrics exported with only the traces endpoint set: %v", rc.metrics)
	}
}

// TestKilledChildOnTheTaskSpan: a child the lifeguard kills cannot export
// its own spans; its parent's Task call span says what happened to it.
func TestKilledChildOnTheTaskSpan(t *testing.T) {
	rc := &receiver{metrics: map[string]bool{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	p := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "hanger.md"), "---\nname: hanger\ndescription: hangs\ntools: Read\n---\nYou hang.\n")
	spec := p.Script("hang.yaml", "agents:\n  root:\n    - tools: [{Task: {subagent_type: hanger, description: \"hang\", prompt: \"hang\"}}]\n    - say: \"root done\"\n  hanger:\n    - freeze: true\n")
	testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[pool]\nping_interval = \"100ms\"\nheartbeat_timeout = \"1s\"\n")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + srv.URL + "/v1/traces"}, "run", "--model", spec, "hang")
	if code != 0 {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var task *tracepb.Span
	for _, s := range rc.spans {
		if s.Name == "execute_tool Task" {
			task = s
		}
		if s.Name == "invoke_agent hanger" {
			t.Errorf("a frozen child exported its span")
		}
	}
	if task == nil || str(task, "brood.killed_by") != "lifeguard" || str(task, "brood.task.status") != "killed" || str(task, "brood.child.agent") != "hanger" {
		t.Fatalf("Task span: %v", task)
	}
	if task.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || str(task, "error.type") != "killed" {
		t.Errorf("a killed child's Task span: status %v, error.type %q; want ERROR, killed", task.Status, str(task, "error.type"))
	}
}
