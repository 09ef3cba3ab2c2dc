package tool

import (
	"embed"
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// descriptions holds what the model is told about each tool, one Markdown
// file per tool, so the prose can be edited and reviewed as prose.
//
//go:embed descriptions/*.md
var descriptions embed.FS

// spec builds a ToolSpec from the embedded description of name and a schema.
func spec(name, file, schema string) model.ToolSpec {
	b, err := descriptions.ReadFile("descriptions/" + file)
	if err != nil {
		// The files are embedded at build time; a missing one is a build
		// mistake that the tests catch, not something to recover from.
		panic("tool: missing description " + file)
	}
	return model.ToolSpec{Name: name, Description: strings.TrimSpace(string(b)), Schema: json.RawMessage(schema)}
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
