package tool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Read-only commands run with no rule (as Claude Code allows them): each
// entry is a prefix rule that the option checks of options.go hold to, so
// "git log" is allowed and "git log --output=F" is not, "find . -name x"
// and not "find . -delete". Redirections that write still need approval,
// and plan mode still refuses Bash.

// readOnlyCommands only tell about the tree and the machine.
var readOnlyCommands = []string{
	"ls", "pwd", "cd", "which", "whoami", "id", "uname", "stat", "du", "df", "basename", "dirname",
	"realpath", "readlink", "true", "false",
	"git status", "git rev-parse", "git ls-files", "git describe", "git remote -v", "git branch --show-current",
	"git stash list",
}

// readOnlyReaders print what files hold: allowed only while no deny rule
// for Read exists (the rule would not see what they read).
var readOnlyReaders = []string{
	"cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "sort", "uniq", "cut", "tr", "nl",
	"diff", "cmp", "jq",
	"git log", "git diff", "git show", "git blame",
}

// builtinAllow are the rules of the read-only set for these permissions.
func (p *Permissions) builtinAllow() []Rule {
	names := readOnlyCommands
	if !hasRulesFor(p.deny, "Read") {
		names = append(append([]string(nil), names...), readOnlyReaders...)
	}
	out := make([]Rule, len(names))
	for i, n := range names {
		out[i] = Rule{Tool: "Bash", Specifier: n + ":*", builtin: true}
	}
	return out
}

// ruleReason is the reason of an allow by r.
func ruleReason(r Rule) string {
	if r.builtin {
		return fmt.Sprintf("%s is a read-only command, allowed without a rule", strings.TrimSuffix(r.Specifier, ":*"))
	}
	return fmt.Sprintf("matched allow rule %q", r.String())
}

// ReadOnlyCommand reports whether a Bash command line is one brood's
// permissions allow without a rule as read-only: every command of it in
// the read-only set, none with an option that writes or runs something,
// no redirection into a file. The edge guardrails read a child's other
// Bash calls as changes to its files (guard.Input.ReadOnly).
func ReadOnlyCommand(command string) bool {
	p := &Permissions{mode: ModeDefault}
	b, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return false
	}
	d := p.Check("Bash", b, "")
	return d.Verdict == Allow && d.Rule == "" && strings.HasSuffix(d.Reason, "is a read-only command, allowed without a rule")
}
