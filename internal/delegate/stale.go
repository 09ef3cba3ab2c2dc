package delegate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/model"
)

// staleReads lists the files a child changed that the caller read earlier
// in its conversation (Hermes' stale-read warning): what the caller holds
// of them is out of date. changed is relative to the workspace.
func staleReads(history []model.Message, workspace string, changed []string) []string {
	if len(changed) == 0 || len(history) == 0 {
		return nil
	}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workspace, p)
		}
		return filepath.Clean(p)
	}
	read := map[string]bool{}
	for _, m := range history {
		for _, p := range m.Content {
			if p.Type != model.PartToolUse || !strings.EqualFold(p.Name, "Read") {
				continue
			}
			var in struct {
				FilePath string `json:"file_path"`
			}
			if json.Unmarshal(p.Input, &in) == nil && in.FilePath != "" {
				read[abs(in.FilePath)] = true
			}
		}
	}
	var out []string
	for _, f := range changed {
		if read[abs(f)] {
			out = append(out, f)
		}
	}
	return out
}

// staleNote is the line the Task result carries for them.
func staleNote(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return fmt.Sprintf("Stale: you read %s earlier in this conversation and the subagent changed it since; read it again before you rely on it or edit it.\n", strings.Join(files, ", "))
}
