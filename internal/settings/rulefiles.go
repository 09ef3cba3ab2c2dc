package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/trust"
)

// askFrom lists, for each rule of ask, the settings files whose ask list
// names it, as the user reads their names (displayName): the refusal by
// an ask rule says where to remove it, and every one of them must.
func askFrom(src Sources, files []File, ask []string) []trust.RuleFiles {
	var out []trust.RuleFiles
	lists := make([][]string, len(files))
	for i, f := range files {
		if f.Exists {
			lists[i] = fileRules(f.Path, "ask")
		}
	}
	for _, r := range ask {
		rf := trust.RuleFiles{Rule: r}
		for i, l := range lists {
			if name := displayName(src, files[i]); slices.Contains(l, r) && !slices.Contains(rf.Files, name) {
				rf.Files = append(rf.Files, name)
			}
		}
		if len(rf.Files) > 0 {
			out = append(out, rf)
		}
	}
	return out
}

// fileRules is the permissions list key of the settings file at path (a
// Claude Code settings.json or a brood settings.toml); nil when it has
// none or cannot be read as one.
func fileRules(path, key string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc struct {
		Permissions map[string]any `json:"permissions" toml:"permissions"`
	}
	if strings.HasSuffix(path, ".json") {
		if json.Unmarshal(data, &doc) != nil {
			return nil
		}
	} else if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil
	}
	list, _ := doc.Permissions[key].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// displayName is a settings file's name as a user finds it: the user's
// under ~ (a delegating child's copy of the user's file is named as the
// user's), the project's relative to the project.
func displayName(src Sources, f File) string {
	switch f.Source {
	case "user":
		return "~/.config/brood/settings.toml"
	case "claude-user":
		return "~/.claude/settings.json"
	}
	if src.ProjectRoot != "" {
		if rel, err := filepath.Rel(src.ProjectRoot, f.Path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return f.Path
}
