package settings

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// SettingSources are the kinds of settings file Claude Code's
// --setting-sources names: the user's (~/.claude/settings.json,
// ~/.config/brood/settings.toml), the project's shared files
// (.claude/settings.json, .brood/settings.toml) and its local ones
// (.claude/settings.local.json, .brood/settings.local.toml).
var SettingSources = []string{"user", "project", "local"}

// ParseSettingSources reads --setting-sources: a comma-separated list of
// user, project and local ("" is none of them, as in Claude Code).
func ParseSettingSources(v string) ([]string, error) {
	out := []string{}
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(SettingSources, s) {
			return nil, fmt.Errorf("--setting-sources: invalid setting source %q; valid options are: %s", s, strings.Join(SettingSources, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// SourceOf is the --setting-sources kind of a settings file: local for a
// project's *.local.* file, project for the project's others, user for
// the rest.
func SourceOf(projectRoot, path string) string {
	if projectRoot != "" {
		if rel, err := filepath.Rel(projectRoot, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if strings.Contains(filepath.Base(path), ".local.") {
				return "local"
			}
			return "project"
		}
	}
	return "user"
}

// Loads reports whether a run limited to only (nil: every source) reads
// the settings file path.
func Loads(only []string, projectRoot, path string) bool {
	return only == nil || slices.Contains(only, SourceOf(projectRoot, path))
}
