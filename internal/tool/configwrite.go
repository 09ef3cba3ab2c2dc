package tool

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/trust"
)

// No tool writes brood's or Claude Code's configuration, whatever the
// rules and the mode say: an allowed command that wrote
// .brood/settings.local.toml with allow = ["Bash(*)"] would have granted
// every later run everything, with no trust step (a local settings file is
// taken for a person's own answers). The person edits these files; the
// model says what should change.

// isConfigFile reports whether the absolute path p is configuration: under
// a .claude directory, under .brood except its run records, a .mcp.json, a
// settings.local.* anywhere, git's configuration, hooks and info (which
// name programs that git — the read-only git commands brood runs without a
// rule included — would run), or the user's ~/.config/brood, ~/.claude,
// ~/.claude.json, ~/.gitconfig and ~/.config/git. p is judged as written
// and with its links resolved.
func isConfigFile(p string) bool {
	for _, q := range []string{p, ResolveLinks(p), followLinks(p)} {
		rel := strings.TrimPrefix(filepath.ToSlash(q), "/")
		if trust.IsConfigPath(rel) || strings.HasPrefix(filepath.Base(q), "settings.local.") || trust.IsGitGuardedPath(rel) {
			return true
		}
		if home, err := os.UserHomeDir(); err == nil && home != "" {
			for _, d := range []string{filepath.Join(home, ".config", "brood"), filepath.Join(home, ".claude"), filepath.Join(home, trust.ClaudeJSONFile),
				filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git")} {
				if inside(d, q) || inside(ResolveLinks(d), q) {
					return true
				}
			}
		}
	}
	return false
}

// configWrite is one file a call would write that is configuration, and
// what makes the call write it.
type configWrite struct {
	path string // absolute
	how  string // "a redirection", "--output", "Write"
}

// configWrites lists what c would write of brood's configuration: the
// file of a Write or Edit; for Bash, the targets of its redirections and
// of the options and programs that write (options.go), also behind
// wrappers and in "sh -c" scripts. After a cd, a relative target may be
// anywhere: it counts when its own name is configuration's
// (settings.local.*, .mcp.json, under .brood/ or .claude/).
func configWrites(c call) []configWrite {
	var out []configWrite
	add := func(raw, how string) {
		abs := resolvePath(c.workspace, raw)
		if isConfigFile(abs) || (c.chdir && !filepath.IsAbs(raw) && !strings.HasPrefix(raw, "~") && relConfig(raw)) {
			out = append(out, configWrite{path: abs, how: how})
		}
	}
	switch {
	case c.kind == subjectPath && isEditTool(c.tool):
		if isConfigFile(c.subject) {
			out = append(out, configWrite{path: c.subject, how: c.tool})
		}
	case c.kind == subjectCommand:
		for _, w := range c.rawWrites {
			add(w, "a redirection")
		}
		for _, cmd := range c.cmds {
			for _, t := range writeTargets(cmd.args, c.workspace) {
				add(t.target, t.opt)
			}
		}
	}
	return out
}

// relConfig reports a relative path whose own segments make it
// configuration wherever it is.
func relConfig(rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	return trust.IsConfigPath(rel) || strings.HasPrefix(path.Base(rel), "settings.local.") || trust.IsGitGuardedPath(rel)
}

// writeTargets are the files a command writes through its options or as
// its operands, as written (literal words only: a computed one is a risk
// of its own), also those of the command a wrapper runs.
func writeTargets(args []shWord, ws string) []risk {
	var out []risk
	for depth := 0; len(args) > 0 && depth < 8; depth++ {
		a := analyse(args, ws)
		for _, r := range a.risks {
			if r.target != "" && r.lit {
				out = append(out, r)
			}
		}
		args = a.inner
	}
	return out
}

// configDenial is the decision for a call that writes configuration.
func configDenial(c call, ws []configWrite) Decision {
	w := ws[0]
	via := ""
	if c.kind == subjectCommand {
		via = fmt.Sprintf(" (%s writes it)", w.how)
	}
	return Decision{Verdict: Deny, Subject: c.subject, Reason: fmt.Sprintf(
		"%s is configuration (brood's, Claude Code's or git's)%s: no tool writes it, whatever the rules or the mode say; say what should change and why, and the user edits it", w.path, via)}
}

// followLinks resolves every symlink on the way to p, dangling ones too
// (a shell's "> link" creates the file a dangling link names, where
// filepath.EvalSymlinks gives up). It stops after 40 links, as the kernel
// does.
func followLinks(p string) string {
	done := "/"
	rest := strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	for hops := 0; len(rest) > 0; {
		next := filepath.Join(done, rest[0])
		rest = rest[1:]
		target, err := os.Readlink(next)
		if err != nil {
			done = next
			continue
		}
		if hops++; hops > 40 {
			return p
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(done, target)
		}
		rest = append(strings.Split(strings.TrimPrefix(filepath.Clean(target), "/"), "/"), rest...)
		done = "/"
	}
	return done
}
