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

// SourceOf is the --setting-sources kind of a settings file that belongs
// to the user (user) or to the project (local for its *.local.* files,
// project for the others). The caller says which: a path alone cannot,
// as the project root may be the home directory.
func SourceOf(project bool, path string) string {
	switch {
	case !project:
		return "user"
	case strings.Contains(filepath.Base(path), ".local."):
		return "local"
	}
	return "project"
}

// Loads reports whether a run limited to only (nil: every source) reads
// the settings file path, the user's or (project) the project's.
func Loads(only []string, project bool, path string) bool {
	return only == nil || slices.Contains(only, SourceOf(project, path))
}
