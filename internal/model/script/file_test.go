package script_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/script"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDocumentedExampleParses keeps the complete example in
// docs/script-format.md valid.
func TestDocumentedExampleParses(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/script-format.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## A complete example")
	if !ok {
		t.Fatal("the complete example is missing")
	}
	_, block, _ := strings.Cut(after, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	f, err := script.Parse("example", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	m := script.New("example", f)
	resp, err := model.Collect(context.Background(), m, &model.Request{Agent: "explore", Messages: []model.Message{
		model.UserText("find TODO"), assistant("x"), results("a.go:1: // TODO fix\nb.go:2: ok"),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Message.Text(), "a.go:1: // TODO fix") || strings.Contains(resp.Message.Text(), "b.go") {
		t.Errorf("example explore turn 2: %q", resp.Message.Text())
	}
}

func TestDelayHoldsTheAnswerBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := parse(t, "agents:\n  r:\n    - say: late\n      delay: 90m\n")
		start := time.Now()
		resp, err := model.Collect(context.Background(), m, &model.Request{Agent: "r", Messages: []model.Message{user("x")}}, nil)
		if err != nil || resp.Message.Text() != "late" {
			t.Fatal(resp, err)
		}
		if d := time.Since(start); d != 90*time.Minute {
			t.Errorf("answered after %v, want 90m", d)
		}
	})
}
