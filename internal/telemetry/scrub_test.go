package telemetry_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/broodhq/brood/internal/testbrood"
)

// TestSpansCarryNoSecret: a tool's error that quotes a secret (Read's
// "file does not exist: /nonexistent/<token>", beyond the status's
// 200-character cut too) reaches the loopback collector redacted, in the
// root's spans and a child's (red team 21 P2-4: the status message went
// out in clear).
func TestSpansCarryNoSecret(t *testing.T) {
	const secret = "Zq9XvB7kLmN3pQrS8tUwYz1aBcDeFgH2"
	rc := &receiver{metrics: map[string]bool{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	p := testbrood.NewProject(t, mainEnv, nil)
	long := "/nonexistent/" + strings.Repeat("d", 150) + secret // across the 200-character cut
	spec := p.Script("s.yaml", `
agents:
  root:
    - tools:
        - Read: {file_path: /nonexistent/`+secret+`}
        - Read: {file_path: `+long+`}
        - Task: {subagent_type: explore, description: "look", prompt: "look"}
    - say: "done"
  explore:
    - tools:
        - Read: {file_path: /nonexistent/`+secret+`}
    - say: "looked"
`)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + srv.URL + "/v1/traces", "MY_SERVICE_TOKEN=" + secret},
		"run", "--model", spec, "--allow", "Read", "go")
	if code != 0 {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	errs := 0
	for _, s := range rc.spans {
		b, _ := proto.Marshal(s)
		if strings.Contains(string(b), secret[:8]) {
			t.Errorf("span %q carries the secret: status %q", s.Name, s.Status.GetMessage())
		}
		if strings.Contains(s.Status.GetMessage(), "[REDACTED") {
			errs++
		}
	}
	if errs < 3 {
		t.Errorf("%d spans with a redacted error status, want 3 (two of the root's Reads, the child's):\n%v", errs, rc.spans)
	}
}
