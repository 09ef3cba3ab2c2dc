package trust

import (
	"encoding/json"
	"path/filepath"
)

// ClaudeTrustsFolder reports whether Claude Code's own folder-trust dialog
// was accepted for dir: ~/.claude.json (under home) has
// projects[dir].hasTrustDialogAccepted = true, dir as given or with its
// links resolved (Claude Code keys a project by its working directory).
// Only dir itself counts, never a directory above it: a download unpacked
// below a folder you trusted is not that folder. A file that is missing,
// unreadable, not JSON or not of Claude Code's shape trusts nothing.
// Claude Code shows the dialog before it honours a folder's files, so a
// Claude Code user's own .claude/settings.local.json there is theirs.
// A subagent cannot set the key: it is guarded like configuration
// (claudeProjectKeys).
func ClaudeTrustsFolder(home, dir string) bool {
	if home == "" || dir == "" || !filepath.IsAbs(dir) {
		return false
	}
	data, exists, err := readBounded(filepath.Join(home, ClaudeJSONFile))
	if err != nil || !exists {
		return false
	}
	var top struct {
		Projects map[string]struct {
			HasTrustDialogAccepted *bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	for _, d := range []string{filepath.Clean(dir), Key(dir)} {
		if p, ok := top.Projects[d]; ok && p.HasTrustDialogAccepted != nil && *p.HasTrustDialogAccepted {
			return true
		}
	}
	return false
}
