// Package gitx is the one way brood runs git on a repository it does not
// trust: the user's tree a child wrote in, a child's copy, a fleet
// worker's cache filled from a submission. Every production exec of git
// goes through Cmd.
//
// A repository is hostile: its configuration (.git/config, an included
// file, .git/hooks) can name programs that git runs on its own — an
// fsmonitor on every index refresh, hooks, a pager, external diff and
// textconv drivers, clean/smudge/process filters, merge drivers, an ssh
// command, credential helpers, upload-pack on a fetch. Cmd switches them
// off:
//
//   - always, on the command line (which wins over every config file):
//     core.fsmonitor=false, core.hooksPath=/dev/null, core.pager=cat,
//     diff.external empty, core.sshCommand=ssh, core.askPass and
//     credential.helper empty, core.alternateRefsCommand empty,
//     commit.gpgSign=false, submodule.recurse=false, and a protocol allowlist (file, ssh, https,
//     http; never ext::, fd:: or git://); --no-ext-diff --no-textconv on
//     the diff family; --ignore-submodules=dirty on status and the
//     diffs against the work tree (git never runs in a submodule to see
//     whether it is dirty);
//   - in the environment: no GIT_SSH*, GIT_PROXY_COMMAND, GIT_ASKPASS (set
//     empty, which also silences SSH_ASKPASS and core.askPass),
//     GIT_EXTERNAL_DIFF, GIT_PAGER/PAGER (cat), GIT_EDITOR (:),
//     GIT_CONFIG_PARAMETERS/GIT_CONFIG_COUNT (config from the environment),
//     GIT_EXEC_PATH, GIT_ALLOW_PROTOCOL; GIT_TERMINAL_PROMPT=0 and
//     GIT_NO_REPLACE_OBJECTS=1 (a repository's refs/replace cannot change
//     what an object id means to brood);
//   - the programs a repository defines under a name of its choosing
//     (filter.NAME.clean/smudge/process, diff.NAME.textconv/command,
//     merge.NAME.driver, credential.URL.helper, hook.NAME.command) cannot
//     be blanked by one fixed -c: before a command that may convert,
//     merge or fetch, Cmd lists the repository's own (local and worktree
//     scope) definitions with `git config --get-regexp` (which runs
//     nothing) and overrides each in the command scope (the
//     GIT_CONFIG_COUNT form, which git also passes to the git processes it
//     starts). Those of the user's own ~/.gitconfig and the system's
//     (git-lfs, installed by the user) stay. A fetch names
//     --upload-pack=git-upload-pack itself (remote.NAME.uploadpack is
//     multi-valued: git takes the repository's first).
//   - with NoUserConfig (a fleet worker's git on a submission's copy),
//     the user's and the system's configuration too, git-lfs's among
//     them;
//   - with NoFilters (git on what a child wrote, whose .gitattributes
//     choose the filter), every filter of every scope, the user's too.
//
// Limits: the definitions are read just before the command (or, for the
// commands of a Batch, before the first of them), so a writer
// that changes .git/config in between wins that race (the in-place
// confinement and the configuration guard are the walls for that); a
// submodule's own configuration is not read (fsmonitor, hooks and the
// rest of the fixed list do reach the git processes git starts in it).
//
// Arguments that came from a child, a repository or a submitter go after
// "--" or "--end-of-options", or are checked first (IsObjectID,
// BranchName): the caller's job, which the functions here make short.
package gitx

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Cmd is one git invocation.
type Cmd struct {
	// Dir is where git runs ("" = the current directory).
	Dir string
	// Env is added to the cleaned environment (GIT_DIR=..., GIT_INDEX_FILE=...).
	Env []string
	// Stdin, when set, is git's standard input.
	Stdin io.Reader
	// NoUserConfig leaves out the system's and the user's configuration
	// (GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null, after Env so
	// nothing there undoes it): for git on content that is not the
	// user's own tree (a fleet worker's copy of a submission), where a
	// globally installed filter (git-lfs, git-crypt) or core.autocrlf
	// must not act.
	NoUserConfig bool
	// NoFilters switches off every clean/smudge/process filter, the
	// user's and the system's too (git-lfs), for git that hashes or
	// checks out what a child wrote: there the .gitattributes that choose
	// which filter runs on which file are the child's (its copy's, or a
	// patch's), and a filter is a program run unconfined. Built-in
	// conversions (eol, ident, working-tree-encoding) still apply.
	NoFilters bool
	// KeepFilters, with NoFilters, are the filter drivers of the user's
	// and the system's configuration left on: those the base's own
	// .gitattributes name (git-lfs, git-crypt), never one defined in the
	// repository's configuration.
	KeepFilters []string
}

// In is a Cmd in dir.
func In(dir string) Cmd { return Cmd{Dir: dir} }

// Error is a failed git command in git's own words.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode is git's exit status, or -1 when it did not exit normally.
func (e *Error) ExitCode() int {
	if ee, ok := e.Err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// Run runs git with args and returns its standard output; a failure is an
// *Error carrying what git printed on stderr.
func (c Cmd) Run(ctx context.Context, args ...string) (string, error) {
	cmd, err := c.Command(ctx, args...)
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &Error{Args: args, Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}

// Line runs git and returns the first line of its output, trimmed.
func (c Cmd) Line(ctx context.Context, args ...string) (string, error) {
	out, err := c.Run(ctx, args...)
	out, _, _ = strings.Cut(out, "\n")
	return strings.TrimSpace(out), err
}

// Command is the *exec.Cmd Run would start, for a caller that streams its
// output or reads its exit code itself. Its Stdout and Stderr are unset.
// It fails only when the repository's configuration could not be read
// to switch its programs off (then nothing is run).
func (c Cmd) Command(ctx context.Context, args ...string) (*exec.Cmd, error) {
	var over []string
	if mayRunDrivers(args) {
		var err error
		if over, err = c.overrides(ctx); err != nil {
			return nil, err
		}
	}
	full := append(append([]string{}, fixed...), args...)
	full = diffFlags(full, len(fixed))
	full = submoduleFlags(full, len(fixed))
	full = transportFlags(full, len(fixed))
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = c.Dir
	cmd.Env = append(Env(c.Env), over...)
	if c.NoUserConfig {
		cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	}
	cmd.Stdin = c.Stdin
	return cmd, nil
}

// Run runs git in dir (Cmd{Dir: dir}.Run).
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	return Cmd{Dir: dir}.Run(ctx, args...)
}

// Version is `git --version`'s line, or an error when git is not there.
func Version(ctx context.Context) (string, error) {
	return Cmd{}.Line(ctx, "--version")
}

// fixed is put before every command: the programs any configuration can
// name under a fixed key, switched off, and the transports git may use.
var fixed = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.pager=cat",
	"-c", "diff.external=",
	"-c", "core.sshCommand=ssh",
	"-c", "core.askPass=",
	"-c", "credential.helper=",
	"-c", "core.alternateRefsCommand=",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "submodule.recurse=false",
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=always",
	"-c", "protocol.ssh.allow=always",
	"-c", "protocol.https.allow=always",
	"-c", "protocol.http.allow=always",
	"--no-pager",
}

// dropEnv are variables of the caller's environment git must not see:
// those that point it at another repository, index or object store, and
// those that name programs or config.
var dropEnv = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_OBJECT_DIRECTORY": true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true, "GIT_NAMESPACE": true,
	"GIT_CEILING_DIRECTORIES": true, "GIT_PREFIX": true, "GIT_QUARANTINE_PATH": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_SSH_VARIANT": true, "GIT_PROXY_COMMAND": true,
	"GIT_ASKPASS": true, "GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "PAGER": true,
	"GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true,
	"GIT_CONFIG": true, "GIT_EXEC_PATH": true, "GIT_ALLOW_PROTOCOL": true, "GIT_PROTOCOL_FROM_USER": true,
	"GIT_REPLACE_REF_BASE": true,
}

// Env is the environment of every git call: the caller's without dropEnv
// (and GIT_CONFIG_KEY_n/VALUE_n), plus literal pathspecs, no optional
// locks, no prompts, no pager, no editor, no replace objects, then extra.
func Env(extra []string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+8)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if dropEnv[k] || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_LITERAL_PATHSPECS=1", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=:", "GIT_NO_REPLACE_OBJECTS=1")
	return append(env, extra...)
}

// diffFamily are the subcommands that take --no-ext-diff and --no-textconv.
var diffFamily = map[string]bool{"diff": true, "diff-tree": true, "diff-index": true, "diff-files": true, "log": true, "show": true}

// diffFlags puts --no-ext-diff --no-textconv among a diff-family
// command's options (args[from:] are the caller's): after all of them,
// before "--" or "--end-of-options" if there is one, so a caller's
// --ext-diff or --textconv cannot come later and win.
func diffFlags(full []string, from int) []string {
	i := subcommand(full[from:])
	if i < 0 || !diffFamily[full[from+i]] {
		return full
	}
	at := len(full)
	for j := from + i + 1; j < len(full); j++ {
		if full[j] == "--" || full[j] == "--end-of-options" {
			at = j
			break
		}
	}
	out := append(append([]string{}, full[:at]...), "--no-ext-diff", "--no-textconv")
	return append(out, full[at:]...)
}

// worktreeFamily are the subcommands that compare the work tree and would
// run git in each submodule to see whether it is dirty (its own
// configuration, which a writer may have made: an fsmonitor, hooks).
var worktreeFamily = map[string]bool{"status": true, "diff": true, "diff-index": true, "diff-files": true}

// submoduleFlags puts --ignore-submodules=dirty among a worktreeFamily
// command's options (where diffFlags puts its own): a submodule's new
// commit still shows, its work tree is never looked into.
func submoduleFlags(full []string, from int) []string {
	i := subcommand(full[from:])
	if i < 0 || !worktreeFamily[full[from+i]] {
		return full
	}
	at := len(full)
	for j := from + i + 1; j < len(full); j++ {
		if full[j] == "--" || full[j] == "--end-of-options" {
			at = j
			break
		}
	}
	out := append(append([]string{}, full[:at]...), "--ignore-submodules=dirty")
	return append(out, full[at:]...)
}

// transportFlags names the standard programs on the command line of a
// fetch (the option wins over remote.NAME.uploadpack, which a -c cannot
// override: git takes the first of several).
func transportFlags(full []string, from int) []string {
	i := subcommand(full[from:])
	if i < 0 {
		return full
	}
	var flag string
	switch full[from+i] {
	case "fetch", "ls-remote", "clone", "pull":
		flag = "--upload-pack=git-upload-pack"
	case "push":
		flag = "--receive-pack=git-receive-pack"
	default:
		return full
	}
	at := from + i + 1
	out := append(append([]string{}, full[:at]...), flag)
	return append(out, full[at:]...)
}

// subcommand is the index of git's subcommand in args: the first word
// that is not a global option or an option's value; -1 when there is none.
func subcommand(args []string) int {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return i
		}
	}
	return -1
}
