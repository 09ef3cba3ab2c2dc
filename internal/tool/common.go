package tool

import (
	_ "embed" // the tools' descriptions
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// What the model is told about each tool, one Markdown file per tool, so
// the prose can be edited and reviewed as prose; embedded as strings, so a
// spec is built without copying its text (Spec is called for every name
// lookup and every request).
var (
	//go:embed descriptions/bash.md
	bashDescription string
	//go:embed descriptions/edit.md
	editDescription string
	//go:embed descriptions/glob.md
	globDescription string
	//go:embed descriptions/grep.md
	grepDescription string
	//go:embed descriptions/ls.md
	lsDescription string
	//go:embed descriptions/read.md
	readDescription string
	//go:embed descriptions/write.md
	writeDescription string
)

// spec builds a ToolSpec from a tool's description and its schema.
func spec(name, description, schema string) model.ToolSpec {
	return model.ToolSpec{Name: name, Description: strings.TrimSpace(description), Schema: json.RawMessage(schema)}
}

// decode reads a tool's input. Set.Run has already checked it against the
// schema, so a failure here is rare; the message still says what to fix.
func decode(toolName string, input json.RawMessage, v any) (Result, bool) {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, v); err != nil {
		return Errorf("invalid input for %s: %v; send a JSON object matching the tool's input schema", toolName, err), false
	}
	return Result{}, true
}

// Defaults for the Env limits a caller left at zero.
const (
	defaultBashTimeout = 2 * time.Minute
	maxBashTimeout     = 10 * time.Minute
	defaultOutputLimit = 30000
)

func (e *Env) bashTimeout() time.Duration {
	if e.BashTimeout > 0 {
		return e.BashTimeout
	}
	return defaultBashTimeout
}

func (e *Env) outputLimit() int {
	if e.OutputLimit > 0 {
		return e.OutputLimit
	}
	return defaultOutputLimit
}

func (e *Env) outputDir() string {
	if e.OutputDir != "" {
		return e.OutputDir
	}
	return os.TempDir()
}

// abs resolves a path from the model against the workspace.
func (e *Env) abs(p string) string { return resolvePath(e.Dir, p) }
