package tool

import (
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/trust"
)

// analysis is what one command does beyond its name.
type analysis struct {
	risks []risk
	// inner is the command a wrapper runs (timeout 5 go test: go test),
	// which an allow rule must cover in its own right.
	inner []shWord
	// innerAt is the index of inner[0] in the command.
	innerAt int
}

// spelt is the risk of a word the shell computes, in a program whose
// options can write or run.
const spelt = "is spelt by the shell (an expansion, a glob or a brace): it could become an option that writes or runs a program, or a path brood must not write"

// analyse lists the risks of one command (args: program first) for a
// prefix rule; ws is the workspace, against which git -C is judged.
func analyse(args []shWord, ws string) analysis {
	if len(args) == 0 {
		return analysis{}
	}
	prog := programName(args[0].text)
	var a analysis
	switch prog {
	case "xargs":
		if len(args) > 1 {
			a.risks = []risk{{at: 1, opt: "xargs", why: "runs a program with arguments read from its input, which no rule can see"}}
		}
	case "npx", "pnpx", "bunx":
		a.risks = []risk{{at: 0, opt: prog, why: "runs a package's program"}}
	case "git":
		a.risks = gitRisks(args, ws)
	case "sed", "gsed":
		a.risks = sedRisks(args)
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		a.risks = awkRisks(args)
	case "tar", "gtar", "bsdtar":
		a.risks = tarRisks(args)
	case "wget":
		a.risks = wgetRisks(args)
	case "unzip":
		a.risks = unzipRisks(args)
	case "go":
		a.risks = goRisks(args, ws)
	case "npm", "pnpm", "yarn", "bun":
		a.risks = npmRisks(args)
	case "make", "gmake":
		a.risks = append(optTables()["make"].scan(args), makeVarRisks(args)...)
	case "pytest", "py.test":
		a.risks = append(append(optTables()["pytest"].scan(args), pytestPlugins(args)...), pytestOutside(args, ws)...)
	case "uniq":
		if ops := operandsOf(args, ""); len(ops) > 1 {
			a.risks = []risk{{at: ops[1], opt: "uniq", why: effWrite, target: args[ops[1]].text, lit: args[ops[1]].lit}}
		}
	case "dd":
		for i, w := range args[1:] {
			if v, ok := strings.CutPrefix(w.text, "of="); ok {
				a.risks = append(a.risks, risk{at: i + 1, opt: "of=", why: effWrite, target: v, lit: w.lit})
			}
		}
	case "brood", "claude":
		a.risks = agentCLIRisks(args)
	case "cargo":
		a.risks = (&optTable{long: map[string]string{"config": "sets configuration that can name programs cargo runs"}, short: map[byte]string{'Z': "turns on unstable features"}, valued: "pjZ", abbrev: false}).scan(args)
	default:
		if _, ok := trust.WrapperOptions(prog); ok {
			return unwrap(args, prog)
		}
		t, ok := optTables()[prog]
		if !ok {
			return analysis{}
		}
		a.risks = t.scan(args)
	}
	// A program brood knows options of: a word the shell computes could
	// be any of them (after "--" only an operand, where operands are read:
	// git's paths, sort's files).
	stop := prog == "git"
	if t, ok := optTables()[prog]; ok {
		stop = !t.noDashDash && !t.writesOperands && !t.lastOperand
	}
	for i, w := range args[1:] {
		if stop && w.lit && w.text == "--" {
			break
		}
		if !w.lit && !computedValue(prog, args, i+1) {
			a.risks = append(a.risks, risk{at: i + 1, opt: w.text, why: spelt})
		}
	}
	return a
}

// unwrap reads a wrapper (env, timeout, nice, command, exec, sudo, ...):
// its own risky options, and the command it runs.
func unwrap(args []shWord, prog string) analysis {
	var a analysis
	opt, _ := trust.WrapperOptions(prog)
	i := 1
scan:
	for i < len(args) {
		w := args[i].text
		switch {
		case !args[i].lit:
			a.risks = append(a.risks, risk{at: i, opt: w, why: spelt})
			break scan
		case prog == "env" && (strings.HasPrefix(w, "-S") || strings.HasPrefix(w, "--s")):
			a.risks = append(a.risks, risk{at: i, opt: "-S", why: "splits a string into a command no rule can see"})
		case !strings.HasPrefix(w, "-") && strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
			name, _, _ := strings.Cut(w, "=")
			a.risks = append(a.risks, risk{at: i, opt: name + "=", why: "sets a variable for the command, and variables make programs run others (GIT_EXTERNAL_DIFF, LD_PRELOAD, PAGER, BROOD_TRUST_PROJECT)"})
		case (prog == "command" || prog == "builtin") && (w == "-v" || w == "-V"):
			return a // command -v NAME only says what NAME is
		case prog == "time" && (w == "-o" || strings.HasPrefix(w, "--o")):
			r := risk{at: i, opt: "-o", why: effWrite}
			if v, ok := strings.CutPrefix(w, "--output="); ok {
				r.target, r.lit = v, true
			} else if i+1 < len(args) {
				r.target, r.lit = args[i+1].text, args[i+1].lit
			}
			a.risks = append(a.risks, r)
		}
		switch {
		case w == "--":
			i++
			break scan
		case strings.HasPrefix(w, "-") && len(w) == 2 && strings.ContainsRune(opt, rune(w[1])) && i+1 < len(args):
			i += 2
		case strings.HasPrefix(w, "-") || (strings.Contains(w, "=") && !strings.HasPrefix(w, "=")) || trust.IsNumber(w):
			i++
		default:
			break scan
		}
	}
	if i < len(args) {
		a.inner, a.innerAt = args[i:], i
	}
	return a
}

// operandsOf are the indexes of the words that are not options (nor the
// values of the short options in valued).
func operandsOf(args []shWord, valued string) []int {
	var out []int
	for i := 1; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				out = append(out, j)
			}
			return out
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if len(a) == 2 && strings.IndexByte(valued, a[1]) >= 0 {
				i++
			}
		default:
			out = append(out, i)
		}
	}
	return out
}

// gitValued are, per subcommand, git options whose value is commonly
// computed (git commit -m "$(cat <<EOF ...)") and that always take the
// next word as their value, so it is never an option.
var gitValued = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"commit":   {"-m": true, "--message": true, "-F": true, "--file": true, "--author": true, "--date": true},
		"tag":      {"-m": true, "--message": true, "-F": true, "--file": true},
		"merge":    {"-m": true, "-F": true, "--file": true},
		"notes":    {"-m": true, "--message": true, "-F": true, "--file": true},
		"stash":    {"-m": true, "--message": true},
		"log":      {"--author": true, "--committer": true, "--grep": true},
		"shortlog": {"--author": true, "--committer": true, "--grep": true},
	}
})

// computedValue reports a computed word that can only be an option's
// value: "--name=$(...)" with the name written out (a risky name is the
// table's concern), or, for git, the word after an option that takes one
// (git commit -m, or a cluster ending in m: -am).
func computedValue(prog string, args []shWord, i int) bool {
	w := args[i]
	if strings.HasPrefix(w.head, "--") && strings.Contains(w.head, "=") {
		return true
	}
	if prog != "git" || i < 2 || !args[i-1].lit {
		return false
	}
	sub := gitSubcommand(args)
	prev := args[i-1].text
	if gitValued()[sub][prev] {
		return true
	}
	return sub == "commit" && len(prev) > 2 && prev[0] == '-' && prev[1] != '-' && prev[len(prev)-1] == 'm' &&
		strings.Trim(prev[1:len(prev)-1], "anqsuv") == ""
}

// gitSubcommand is the first word after git's global options.
func gitSubcommand(args []shWord) string {
	for i := 1; i < len(args); i++ {
		a := args[i].text
		if !strings.HasPrefix(a, "-") {
			return a
		}
		switch a {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source":
			i++
		}
	}
	return ""
}

// agentCLIRisks: brood (or Claude Code) run from a tool must not widen
// what a run may do or grant trust: that is a person's decision.
func agentCLIRisks(args []shWord) []risk {
	var out []risk
	sub := ""
	for i := 1; i < len(args); i++ {
		a := args[i].text
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			if sub == "" {
				sub = a
				if a == "trust" && !slicesContainsText(args, "--list") {
					out = append(out, risk{at: i, opt: "trust", why: "grants the project trust, which only a person decides"})
				}
			}
		case name == "trust-project" || name == "dangerously-skip-permissions" || name == "allow" || name == "allowedTools" ||
			name == "allowed-tools" || name == "settings" || name == "add-dir" || name == "mcp-config":
			out = append(out, risk{at: i, opt: "--" + name, why: "widens what the run it starts may do"})
		case name == "permission-mode" || name == "permissionMode":
			if val == "" && i+1 < len(args) {
				val = args[i+1].text
			}
			if m, err := ParseMode(val); err != nil || m == ModeBypass || m == ModeAcceptEdits {
				out = append(out, risk{at: i, opt: "--permission-mode", why: "widens what the run it starts may do (" + val + ")"})
			}
		}
	}
	return out
}
