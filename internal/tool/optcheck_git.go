package tool

import (
	"path/filepath"
	"strings"
	"sync"
)

// git's options that write or run, by subcommand. Each table is scanned
// from the subcommand on; git takes any unique prefix of a long option
// (newer gits in log and diff too), so every table abbreviates.
// gitDiffLong is built at first use, with the tables below (no work at
// package init: every subagent links this package).
var gitDiffLong = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"output":    effWrite,
		"ext-diff":  "runs the external diff program git's configuration names",
		"textconv":  "runs the text conversion programs git's configuration names",
		"no-index":  "compares (and so reads) files outside the repository",
		"exec-path": effRun,
	}
})

// gitTables are the tables by subcommand; the diff family shares one.
var gitTables = sync.OnceValue(func() map[string]*optTable {
	gitDiffLong := gitDiffLong()
	t := map[string]*optTable{
		"format-patch": {long: merge(gitDiffLong, map[string]string{"output-directory": effWriteDir}), short: map[byte]string{'o': effWriteDir}, valued: "nSGOLUMCBvo", abbrev: true},
		"blame":        {long: map[string]string{"textconv": gitDiffLong["textconv"], "contents": "reads a file in place of the work tree's"}, valued: "LSC", abbrev: true},
		"annotate":     {long: map[string]string{"textconv": gitDiffLong["textconv"]}, valued: "LS", abbrev: true},
		"cat-file":     {long: map[string]string{"textconv": gitDiffLong["textconv"], "filters": "runs the filter programs git's configuration names"}, abbrev: true},
		"grep": {long: map[string]string{"open-files-in-pager": effRun, "textconv": gitDiffLong["textconv"], "ext-grep": effRun},
			short: map[byte]string{'O': effRun}, valued: "ABCefm", abbrev: true},
		"difftool":  {long: merge(gitDiffLong, map[string]string{"extcmd": effRun}), short: map[byte]string{'x': effRun}, valued: "xtnSGOLUMCB", abbrev: true},
		"rebase":    {long: map[string]string{"exec": effRun}, short: map[byte]string{'x': effRun}, valued: "sXx", abbrev: true},
		"fetch":     {long: map[string]string{"upload-pack": effRun}, abbrev: true},
		"pull":      {long: map[string]string{"upload-pack": effRun}, abbrev: true},
		"ls-remote": {long: map[string]string{"upload-pack": effRun}, short: map[byte]string{'u': effRun}, abbrev: true},
		"push":      {long: map[string]string{"receive-pack": effRun, "exec": effRun}, abbrev: true},
		"send-pack": {long: map[string]string{"receive-pack": effRun, "exec": effRun}, abbrev: true},
		"archive": {long: map[string]string{"output": effWrite, "exec": effRun, "remote": "runs git on another machine"},
			short: map[byte]string{'o': effWrite}, abbrev: true},
		"clone": {long: map[string]string{"upload-pack": effRun, "template": "installs hooks from a directory, which later git commands run",
			"config": "sets configuration that can name programs git runs", "separate-git-dir": effWriteDir},
			short: map[byte]string{'u': effRun, 'c': "sets configuration that can name programs git runs"}, valued: "bjoruc", abbrev: true},
		"init": {long: map[string]string{"template": "installs hooks from a directory, which later git commands run", "separate-git-dir": effWriteDir}, abbrev: true},
	}
	diff := &optTable{long: gitDiffLong, valued: "nSGOLUMCB", abbrev: true}
	for _, s := range []string{"log", "show", "diff", "whatchanged", "diff-tree", "diff-index", "diff-files", "range-diff", "stash", "reflog", "shortlog"} {
		t[s] = diff
	}
	return t
})

// gitRunners are subcommands that run programs whatever their options.
var gitRunners = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"difftool": "runs the diff tool git's configuration names", "mergetool": "runs the merge tool git's configuration names",
		"filter-branch": effRun, "instaweb": effRun, "daemon": "serves the repository", "send-email": "sends mail",
		"credential": "runs credential helpers", "credential-store": "handles credentials", "credential-cache": "handles credentials",
		"hook": "runs the repository's hooks", "web--browse": effRun, "upload-pack": effRun, "receive-pack": effRun,
		"shell": effRun, "p4": effRun, "svn": effRun, "cvsimport": effRun, "cvsserver": effRun, "archimport": effRun,
		"quiltimport": effRun, "remote-ext": effRun, "fsmonitor--daemon": effRun, "maintenance": "runs and schedules git programs",
	}
})

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// gitUnion is every risky long option of every subcommand: the table of a
// subcommand brood does not know (or an alias).
func gitUnion() *optTable {
	long := map[string]string{}
	for _, t := range gitTables() {
		for k, v := range t.long {
			long[k] = v
		}
	}
	return &optTable{long: long, abbrev: true}
}

const elsewhere = "runs git in another repository, whose configuration can name programs git runs"

// plainGitTarget reports whether git -C DIR (or --git-dir, --work-tree)
// reaches a repository whose configuration names no program.
func plainGitTarget(opt, p string) bool {
	if strings.HasPrefix(opt, "--git-dir") {
		return filepath.Base(p) == ".git" && plainGitDir(p)
	}
	return plainGitRepo(p)
}

// gitRisks reads git's global options, then its subcommand's.
func gitRisks(args []shWord, ws string) []risk {
	var out []risk
	i := 1
	for ; i < len(args) && strings.HasPrefix(args[i].text, "-"); i++ {
		a := args[i].text
		value := func() (string, bool) {
			if _, v, ok := strings.Cut(a, "="); ok {
				return v, args[i].lit
			}
			if i+1 < len(args) {
				i++
				return args[i].text, args[i].lit
			}
			return "", true
		}
		switch {
		case strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--"):
			v, _ := value()
			out = append(out, risk{at: i, opt: "-c", why: "sets configuration for this run (" + v + "), which can name programs git runs (alias.x=!cmd, core.pager)"})
		case strings.HasPrefix(a, "--config-env"):
			value()
			out = append(out, risk{at: i, opt: "--config-env", why: "sets configuration for this run, which can name programs git runs"})
		case strings.HasPrefix(a, "--exec-path="):
			out = append(out, risk{at: i, opt: "--exec-path", why: "runs git's programs from another directory"})
		case a == "-C", strings.HasPrefix(a, "--git-dir"), strings.HasPrefix(a, "--work-tree"):
			at := i
			if v, lit := value(); !lit || !inside(ws, resolvePath(ws, v)) || !plainGitTarget(a, resolvePath(ws, v)) {
				out = append(out, risk{at: at, opt: strings.SplitN(a, "=", 2)[0], why: elsewhere + " (" + v + ")"})
			}
		case a == "--namespace", a == "--super-prefix", a == "--attr-source", a == "--list-cmds":
			value()
		}
	}
	if i >= len(args) {
		return out
	}
	sub := args[i].text
	if why, ok := gitRunners()[sub]; ok {
		out = append(out, risk{at: i, opt: "git " + sub, why: why})
	}
	rest := args[i:]
	switch sub {
	case "submodule":
		for j, w := range rest {
			if w.text == "foreach" {
				out = append(out, risk{at: i + j, opt: "foreach", why: "runs a command in every submodule"})
			}
		}
	case "bisect":
		if len(rest) > 1 && rest[1].text == "run" {
			out = append(out, risk{at: i + 1, opt: "run", why: effRun})
		}
	case "config":
		if !gitConfigReads(rest) {
			out = append(out, risk{at: i, opt: "git config", why: "changes git's configuration, which can name programs git runs"})
		}
	case "bundle":
		if len(rest) > 2 && rest[1].text == "create" {
			for j := 2; j < len(rest); j++ {
				if !strings.HasPrefix(rest[j].text, "-") {
					out = append(out, risk{at: i + j, opt: "create", why: effWrite, target: rest[j].text, lit: rest[j].lit})
					break
				}
			}
		}
	}
	t, ok := gitTables()[sub]
	if !ok {
		t = gitUnion()
	}
	for _, r := range t.scan(rest) {
		r.at += i
		out = append(out, r)
	}
	return out
}

// gitConfigReads reports a git config call that only reads: --get*,
// --list, or one name and no value.
func gitConfigReads(rest []shWord) bool {
	names := 0
	for _, w := range rest[1:] {
		a := w.text
		switch {
		case strings.HasPrefix(a, "--get"), a == "-l", a == "--list", a == "get", a == "list":
			return true
		case a == "--global", a == "--system", a == "--local", a == "--worktree", a == "--show-origin", a == "--show-scope",
			a == "--name-only", a == "-z", a == "--null", a == "--bool", a == "--int", a == "--path", strings.HasPrefix(a, "--type"):
		case strings.HasPrefix(a, "-"):
			return false // --add, --unset, --edit, --file, --replace-all, ...
		default:
			names++
		}
	}
	return names <= 1
}
