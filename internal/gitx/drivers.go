package gitx

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// driverKeys matches the configuration keys that name a program under a
// name the repository chooses (git prints keys with the section and the
// variable lowercased, the subsection as written).
const driverKeys = `^(filter\..+\.(clean|smudge|process|required)|diff\..+\.(textconv|command)|merge\..+\.driver|credential\..+\.helper|hook\..+\.command)$`

// neutral is what each kind of key is overridden with: no filter (an
// empty clean/smudge/process is none, and a filter that is not required
// may be missing), the built-in diff, a merge driver that reports a
// conflict, no credential helper, a hook that does nothing.
func neutral(key string) (string, bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return "", false
	}
	sec, _, _ := strings.Cut(key, ".")
	switch name := key[i+1:]; {
	case sec == "filter" && name == "required":
		return "false", true
	case sec == "filter":
		return "", true
	case sec == "diff":
		return "", true
	case sec == "merge":
		return "false", true
	case sec == "credential":
		return "", true
	case sec == "hook":
		return "true", true
	}
	return "", false
}

// noDrivers are subcommands that never convert a work tree file, merge
// with a driver, fetch or push: the repository's driver definitions are
// not looked up for them. read-tree and hash-object are listed with the
// conditions under which they would (mayRunDrivers). write-tree is not
// one: it writes the index back (its cache tree), and git re-hashes a
// racily clean entry's file as it writes the index, through its filter.
var noDrivers = map[string]bool{
	"rev-parse": true, "commit-tree": true, "ls-files": true, "cat-file": true,
	"for-each-ref": true, "merge-base": true, "rev-list": true, "update-ref": true, "symbolic-ref": true,
	"config": true, "init": true, "version": true, "diff-tree": true, "merge-file": true, "remote": true,
	"check-ignore": true, "ls-tree": true, "mktree": true, "show-ref": true, "count-objects": true,
}

// MayRunDrivers reports whether the git command in args (its arguments,
// without "git") may run a filter or another driver a configuration
// names: a caller need only work out Cmd.KeepFilters for those.
func MayRunDrivers(args []string) bool { return mayRunDrivers(args) }

// mayRunDrivers reports whether the command in args may run a program a
// repository defines under a name of its choosing.
func mayRunDrivers(args []string) bool {
	i := subcommand(args)
	if i < 0 {
		return false // git --version
	}
	rest := args[i+1:]
	switch args[i] {
	case "read-tree":
		return slices.Contains(rest, "-u") // a checkout smudges
	case "hash-object":
		return !slices.Contains(rest, "--stdin") || slices.ContainsFunc(rest, func(a string) bool { return strings.HasPrefix(a, "--path") })
	case "bundle":
		return slices.Contains(rest, "unbundle")
	case "apply":
		return !applyOnlyReads(rest)
	}
	return !noDrivers[args[i]]
}

// applyOnlyReads reports whether `git apply` with args only reads its
// patch: --stat, --numstat or --summary, and no option but those that
// shape how the patch is read or printed. Anything else counts as
// applying it, so may run a driver: git takes an abbreviated long option
// ("--app" is --apply, "--che" --check), which a list of the applying
// options would miss (review30 P3-1).
func applyOnlyReads(args []string) bool {
	reads := false
	for _, a := range args {
		switch {
		case a == "--stat" || a == "--numstat" || a == "--summary":
			reads = true
		case a == "-z" || a == "-R" || a == "--reverse" || a == "--recount" || a == "--unidiff-zero" ||
			a == "-v" || a == "--verbose" || a == "-q" || a == "--quiet" || a == "--allow-empty":
		case strings.HasPrefix(a, "--whitespace=") || strings.HasPrefix(a, "--exclude=") || strings.HasPrefix(a, "--include=") ||
			strings.HasPrefix(a, "--directory=") || (len(a) > 2 && (strings.HasPrefix(a, "-p") || strings.HasPrefix(a, "-C"))):
		case a == "-" || !strings.HasPrefix(a, "-"):
			// the patch: stdin, or a file
		default:
			return false // "--" and whatever follows it too: the safe side
		}
	}
	return reads
}

// overrides lists the repository's own driver definitions (local and
// worktree scope; an included file counts as the file that includes it)
// as command-scope configuration that switches each off, in the
// GIT_CONFIG_COUNT/KEY/VALUE environment form (a -c option would split a
// name holding "=" at the wrong place). `git config` runs no program.
func (c Cmd) overrides(ctx context.Context) ([]string, error) {
	out, err := c.driverConfig(ctx)
	if err != nil {
		return nil, err
	}
	return parseOverrides(out, c.NoFilters, c.KeepFilters), nil
}

// driverConfig is the configuration's driver definitions as `git config
// --show-scope --null --get-regexp` prints them, read for c, or once per
// configuration for all the commands of ctx's Batch.
func (c Cmd) driverConfig(ctx context.Context) (string, error) {
	b, _ := ctx.Value(batchKey{}).(*Batch)
	if b == nil {
		return c.readDriverConfig(ctx)
	}
	key := c.Dir
	for _, kv := range c.Env {
		// The index a command works on is not configuration.
		if !strings.HasPrefix(kv, "GIT_INDEX_FILE=") {
			key += "\x00" + kv
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if out, ok := b.read[key]; ok {
		return out, nil
	}
	out, err := c.readDriverConfig(ctx)
	if err == nil {
		b.read[key] = out // an error is not kept: the next command reads again
	}
	return out, err
}

// readDriverConfig runs `git config` (it runs no program) in c's
// directory and environment: the configuration the command will read.
func (c Cmd) readDriverConfig(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, fixed...), "config", "--show-scope", "--null", "--get-regexp", driverKeys)...)
	cmd.Dir, cmd.Env = c.Dir, Env(c.Env)
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1 && len(out) == 0:
		return "", nil // none
	case errors.As(err, &ee) && strings.Contains(string(ee.Stderr), "not in a git directory"):
		return "", nil // not a repository: it has no configuration of its own
	case err != nil:
		return "", fmt.Errorf("git: read the repository's configuration to switch its programs off: %w%s", err, stderrOf(err))
	}
	return string(out), nil
}

// Batch is a run of git commands close together (a landing) that read
// the configuration's driver definitions once, for all of them, instead
// of once before each: a command's are those read for the first command
// of the batch with the same directory and environment (its
// GIT_INDEX_FILE aside). A writer that changes .git/config during the
// batch wins that race as it would between a read and its command.
type Batch struct {
	mu   sync.Mutex
	read map[string]string
}

type batchKey struct{}

// WithBatch is ctx with a new Batch: every Cmd run with the context it
// returns (or one derived from it) shares its reads.
func WithBatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, &Batch{read: map[string]string{}})
}

// parseOverrides reads `git config --show-scope --null --get-regexp`
// output: records "scope\0key\nvalue\0". allFilters takes the filters
// of every scope, not only the repository's (Cmd.NoFilters), but for the
// user's and the system's named in keep (Cmd.KeepFilters).
func parseOverrides(out string, allFilters bool, keep []string) []string {
	var over []string
	seen := map[string]bool{}
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		scope, kv := recs[i], recs[i+1]
		key, _, _ := strings.Cut(kv, "\n")
		if scope != "local" && scope != "worktree" && !(allFilters && strings.HasPrefix(key, "filter.") && !slices.Contains(keep, filterName(key))) {
			continue
		}
		val, ok := neutral(key)
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		over = append(over, key, val)
		if strings.HasPrefix(key, "filter.") {
			// A driver named in .gitattributes may be required: it is
			// not any more (else git refuses the file instead).
			name := key[:strings.LastIndexByte(key, '.')]
			if !seen[name+".required"] {
				seen[name+".required"] = true
				over = append(over, name+".required", "false")
			}
		}
	}
	return configEnv(over)
}

// filterName is the driver a filter.<name>.<variable> key defines.
func filterName(key string) string {
	name := strings.TrimPrefix(key, "filter.")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[:i]
	}
	return name
}

// configEnv is pairs of key, value as GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n
// and GIT_CONFIG_VALUE_n.
func configEnv(pairs []string) []string {
	if len(pairs) == 0 {
		return nil
	}
	env := []string{fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(pairs)/2)}
	for i := 0; i+1 < len(pairs); i += 2 {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i/2, pairs[i]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i/2, pairs[i+1]))
	}
	return env
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
