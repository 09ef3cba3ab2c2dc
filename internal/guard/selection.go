package guard

import (
	"slices"
	"strings"
)

// What a test command selects (evidence3): its runner, its targets
// (packages, paths, make targets), the tests it selects by name (go test
// -run, pytest -k/-m, jest -t, a cargo filter, ctest -R, ...) and those
// it leaves out by name (go test -skip, pytest -k 'not …', --deselect,
// cargo --skip, ...). A run that leaves tests out by name backs no claim
// that tests pass; one that selects by name runs a subset, taken for what
// it ran when nothing failed earlier (leftout.go, unknown.go).

type selection struct {
	runner  string   // the test command it matched (test_commands)
	targets []string // none: the runner's default
	only    []string // name selections, as written ("-k add")
	except  []string // exclusions by name
}

// selectionOf reads one test command's words.
func selectionOf(in Input, words string) selection {
	sel := selection{runner: runnerOf(in, words)}
	rest := strings.Fields(words)
	if n := len(strings.Fields(sel.runner)); n <= len(rest) && !strings.HasPrefix(words, "make") {
		rest = rest[n:]
	} else {
		rest = rest[1:]
	}
	switch fam := family(sel.runner); fam {
	case "go":
		sel.readGo(rest)
	default:
		sel.read(fam, rest)
	}
	return sel
}

// runnerOf is the longest test command words starts with (make's by its
// targets: "make -j4 test" is "make test").
func runnerOf(in Input, words string) string {
	cmds := in.TestCommands
	if cmds == nil {
		cmds = DefaultTestCommands()
	}
	forms := []string{words}
	if strings.HasPrefix(words, "make ") {
		forms = append(forms, makeTargets(words))
	}
	best := ""
	for _, t := range cmds {
		for _, f := range forms {
			if (f == t || strings.HasPrefix(f, t+" ")) && len(t) > len(best) {
				best = t
			}
		}
	}
	if best == "" {
		return words
	}
	return best
}

// family is the runner's option dialect.
func family(runner string) string {
	first := strings.Fields(runner + " x")[0]
	switch {
	case runner == "go test":
		return "go"
	case strings.Contains(runner, "pytest"):
		return "pytest"
	case strings.HasPrefix(runner, "cargo"):
		return "cargo"
	case slices.Contains([]string{"npm", "yarn", "pnpm", "bun", "deno", "npx", "jest", "vitest"}, first):
		return "js"
	case first == "make":
		return "make"
	}
	return first
}

// readGo reads go test's packages, -run and -skip (up to -args).
func (sel *selection) readGo(words []string) {
	for j := 0; j < len(words); j++ {
		w := words[j]
		if w == "-args" || w == "--args" {
			return
		}
		if !strings.HasPrefix(w, "-") {
			sel.targets = append(sel.targets, w)
			continue
		}
		name, value, has := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !has && goValueFlags()[name] && j+1 < len(words) {
			j++
			value = words[j]
		}
		switch name {
		case "short", "test.short":
			if value == "" || value == "true" {
				sel.only = append(sel.only, "-short") // tests may skip themselves
			}
		case "run":
			sel.only = append(sel.only, "-run "+value)
		case "tags":
			sel.only = append(sel.only, "-tags "+value) // another set of files builds
		case "skip":
			sel.except = append(sel.except, "-skip "+value)
		}
	}
}

// nameOptions are, per dialect, the options that select tests by name
// (only), leave them out (except), or take a value that is not a target.
func nameOptions(fam string) (only, except, valued []string) {
	switch fam {
	case "pytest":
		return []string{"-k", "-m", "--lf", "--last-failed", "--sw", "--stepwise", "--ff", "-c", "-o", "--override-ini", "--rootdir", "--confcutdir", "--pyargs"}, []string{"--deselect", "--ignore", "--ignore-glob"},
			[]string{"-p", "-n", "-W", "--maxfail", "--basetemp", "--junitxml", "--durations", "--tb", "-r", "--cov", "--timeout", "--dist"}
	case "js":
		return []string{"-t", "--testNamePattern", "-o", "--onlyChanged", "--changedSince", "--lastCommit", "--findRelatedTests", "-g", "--grep", "--shard", "--project"}, []string{"--testPathIgnorePatterns", "--exclude"},
			[]string{"-c", "--config", "-w", "--maxWorkers", "--reporter", "--reporters", "--coverageDirectory", "--testTimeout", "--pool", "--environment", "--env"}
	case "cargo":
		return []string{"--ignored", "--lib", "--bin", "--bins", "--test", "--tests", "--doc", "--example", "--examples", "--bench", "--benches", "-p", "--package"}, []string{"--skip", "--exclude"},
			[]string{"-j", "--jobs", "--features", "-F", "--target", "--profile", "--test-threads", "--color", "--format", "--manifest-path"}
	case "ctest":
		return []string{"-R", "--tests-regex", "-L", "--label-regex", "-I"}, []string{"-E", "--exclude-regex", "-LE", "--label-exclude"}, []string{"-j", "--parallel", "-C", "--build-config", "--timeout", "--output-junit"}
	case "rspec":
		return []string{"-e", "--example", "-t", "--tag", "--only-failures", "--next-failure"}, nil, []string{"-f", "--format", "-o", "--out", "--seed", "-r", "--require"}
	case "mix":
		return []string{"--only", "--include", "--failed", "--stale"}, []string{"--exclude"}, []string{"--seed", "--max-failures", "--formatter"}
	case "dotnet", "phpunit":
		return []string{"--filter", "--group", "--testsuite"}, []string{"--exclude-group"}, []string{"-c", "--configuration", "-f", "--framework", "--logger", "-l"}
	case "mvn":
		return []string{"-Dtest", "-Dit.test", "-Dgroups"}, []string{"-DexcludedGroups"}, []string{"-pl", "-f", "-P", "-s", "-T"}
	case "gradle", "./gradlew":
		return []string{"--tests"}, []string{"-x", "--exclude-task"}, []string{"-P", "-D", "-p", "--project-dir"}
	}
	return nil, nil, nil
}

// read reads another runner's words: its options that select by name,
// those that leave out, and its targets (a cargo test's free word is a
// name filter, pytest's a path, make's a target).
func (sel *selection) read(fam string, words []string) {
	only, except, valued := nameOptions(fam)
	for j := 0; j < len(words); j++ {
		w := words[j]
		if w == "--" {
			continue // npm test -- -t x, cargo test -- name: the runner's own words
		}
		if fam == "js" && j == 0 && (w == "run" || w == "test") {
			continue // vitest run, bun test
		}
		name, value, has := strings.Cut(w, "=")
		takes := func(list []string) bool { return slices.Contains(list, name) }
		switch {
		case takes(only) || takes(except):
			if !has && j+1 < len(words) && !strings.HasPrefix(words[j+1], "-") && !slices.Contains([]string{"--lf", "--last-failed", "--sw", "--stepwise", "--ff", "-o", "--onlyChanged", "--lastCommit", "--ignored", "--only-failures", "--next-failure", "--failed", "--stale", "--lib", "--bins", "--tests", "--doc", "--examples", "--benches"}, name) {
				j++
				value = words[j]
			}
			if value == "not" && j+1 < len(words) {
				j++ // -k "not slow": the words come joined
				value += " " + words[j]
			}
			entry := strings.TrimSpace(name + " " + value)
			if takes(except) || ((name == "-k" || name == "-m") && negates(value)) {
				sel.except = append(sel.except, entry)
			} else {
				sel.only = append(sel.only, entry)
			}
		case takes(valued):
			if !has {
				j++
			}
		case strings.HasPrefix(w, "-"):
		case fam == "cargo":
			sel.only = append(sel.only, w) // cargo test NAME: a name filter
		case isDigits(w):
		default:
			sel.targets = append(sel.targets, w)
		}
	}
}

// negates reports a pytest -k expression that leaves tests out ("not slow").
func negates(expr string) bool {
	for _, f := range strings.Fields(strings.Trim(expr, `'"()`)) {
		if strings.Trim(f, "()") == "not" {
			return true
		}
	}
	return false
}
