package cmdutil

import "strings"

// steersBrood reports why a variable from a settings env (a project's
// .claude/settings.json, --settings) is not applied, or "" when it may be;
// source names where it came from.
// The env is given to the processes brood starts (Factory.Environ: tools,
// hooks, MCP servers, subagents, which are brood too and run git and their
// own children with it). A settings file must not choose those programs
// (PATH, the dynamic loader), point git at another config or repository,
// or turn brood's own switches (BROOD_*), or choose code every shell runs
// (shellCode), whoever trusted the file.
func steersBrood(name, source string) string {
	upper := strings.ToUpper(name)
	switch {
	case upper == "PATH":
		return "it chooses the programs brood itself runs (git, its subagents); set it in your shell"
	case strings.HasPrefix(upper, "LD_") || strings.HasPrefix(upper, "DYLD_"):
		return "it loads code into every program brood runs; set it in your shell"
	case strings.HasPrefix(upper, "GIT_"):
		return "it steers the git brood itself runs; set it in your shell"
	case strings.HasPrefix(upper, "BROOD_"):
		return "brood's own switches come from your shell or settings.toml, not from " + source
	case upper == "HOME" || strings.HasPrefix(upper, "XDG_"):
		return "it moves where brood keeps its trust records and state; set it in your shell"
	case shellCode(upper):
		return "it chooses code the shell runs in every Bash command, hook and script brood starts; set it in your shell"
	}
	return ""
}

// shellCode reports whether the variable (upper case) makes a shell brood
// starts run code the variable chose: a startup file (bash's BASH_ENV; ENV,
// which sh and bash in POSIX mode read), an exported function that shadows
// a command (BASH_FUNC_name%%, as `git` or `cd`), options read at startup
// (SHELLOPTS=xtrace expands PS4, command substitutions included, before
// every command; BASHOPTS=extdebug sources the debugger), and a prompt
// hook. IFS (bash resets it) and CDPATH (runs nothing) are left alone.
func shellCode(upper string) bool {
	switch upper {
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND":
		return true
	}
	return strings.HasPrefix(upper, "BASH_FUNC_")
}
