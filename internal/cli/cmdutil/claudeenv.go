package cmdutil

import "strings"

// steersBrood reports why a variable from a settings env (a project's
// .claude/settings.json, --settings) is not applied, or "" when it may be;
// source names where it came from.
// The env is given to the processes brood starts (Factory.Environ: tools,
// hooks, MCP servers, subagents, which are brood too and run git and their
// own children with it). A settings file must not choose those programs
// (PATH, the dynamic loader), point git at another config or repository,
// or turn brood's own switches (BROOD_*), or name a startup file every
// shell runs (BASH_ENV, ENV), whoever trusted the file.
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
	case shellStartup(upper):
		return "it names a file the shell runs before every Bash command, hook and script brood starts; set it in your shell"
	}
	return ""
}

// shellStartup reports whether the variable (upper case) names a file a
// non-interactive shell sources before its command: bash's BASH_ENV, and
// ENV, which sh and bash in POSIX mode read.
func shellStartup(upper string) bool {
	return upper == "BASH_ENV" || upper == "ENV"
}
