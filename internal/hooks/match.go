package hooks

import (
	"regexp"
	"strings"
)

// simpleMatcher is a matcher Claude Code compares as names, not as a
// regular expression: "Bash", "Edit|Write".
var simpleMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// Match reports whether a group's matcher selects value, as Claude Code
// does: empty and "*" match everything; a matcher of letters, digits, _ and
// | is a list of exact names; anything else is an (unanchored) regular
// expression, and one that does not compile matches nothing. aliases are
// other names of the same thing (brood's Task is Claude Code's Agent).
func Match(matcher, value string, aliases ...string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	names := append([]string{value}, aliases...)
	if simpleMatcher.MatchString(matcher) {
		for _, m := range strings.Split(matcher, "|") {
			for _, n := range names {
				if strings.TrimSpace(m) == n {
					return true
				}
			}
		}
		return false
	}
	re, err := regexp.Compile(matcher)
	if err != nil {
		return false
	}
	for _, n := range names {
		if re.MatchString(n) {
			return true
		}
	}
	return false
}

// toolAliases are Claude Code's names for brood's tools where they differ.
func toolAliases(name string) []string {
	if name == "Task" {
		return []string{"Agent"}
	}
	return nil
}
