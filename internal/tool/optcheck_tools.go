package tool

import (
	"regexp"
	"strings"
	"sync"
)

var (
	awkPrintRedirect = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bprintf?\b[^;{}\n]*>`) })
	awkString        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"`) })
)

// awkRisks: the program's system(), pipes and print redirections run
// programs or write files; -f reads a program brood cannot see; gawk's
// --profile, --pretty-print and --dump-variables write files and
// --load/--include/--exec load code. gawk's --sandbox refuses the program's
// own risks.
func awkRisks(args []shWord) []risk {
	t := &optTable{long: map[string]string{
		"file": effReadCode, "include": effReadCode, "load": effReadCode, "exec": effReadCode,
		"profile": effWrite, "pretty-print": effWrite, "dump-variables": effWrite, "debug": effRun,
	}, short: map[byte]string{'f': effReadCode, 'i': effReadCode, 'l': effReadCode, 'E': effReadCode,
		'p': effWrite, 'o': effWrite, 'd': effWrite, 'D': effRun}, valued: "fvFilEpodD", abbrev: true}
	out := t.scan(args)
	for _, r := range out {
		if r.opt == "-f" || r.opt == "--file" || r.opt == "-E" || r.opt == "--exec" {
			return out // no program operand to read
		}
	}
	prog, sandbox := "", false
	for i := 1; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--sandbox":
			sandbox = true
		case a == "--":
			if i+1 < len(args) {
				prog = args[i+1].text
			}
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if len(a) == 2 && strings.IndexByte("vF", a[1]) >= 0 {
				i++
			}
		default:
			prog = a
			i = len(args)
		}
	}
	if sandbox || prog == "" {
		return out
	}
	code := awkString().ReplaceAllString(prog, `""`)
	switch {
	case strings.Contains(code, "system"):
		out = append(out, risk{at: 1, opt: "system()", why: effRun})
	case strings.Contains(strings.ReplaceAll(code, "||", ""), "|"):
		out = append(out, risk{at: 1, opt: "|", why: "runs a program from the awk program"})
	case awkPrintRedirect().MatchString(code):
		out = append(out, risk{at: 1, opt: "print >", why: effWrite})
	case strings.Contains(code, "@load") || strings.Contains(code, "@include"):
		out = append(out, risk{at: 1, opt: "@load", why: effReadCode})
	}
	return out
}

// tarRisks: a rule for tar covers listing (-t) and comparing (-d) only;
// creating, extracting and updating write files, and some options run
// programs whatever the mode.
func tarRisks(args []shWord) []risk {
	t := &optTable{long: map[string]string{
		"to-command": effRun, "checkpoint-action": effRun, "use-compress-program": effRun, "rsh-command": effRun,
		"info-script": effRun, "new-volume-script": effRun, "index-file": effWrite,
	}, short: map[byte]string{'I': effRun, 'F': effRun}, valued: "bCfFgIKLNTVX", abbrev: true}
	out := t.scan(args)
	mode := ""
	for i := 1; i < len(args); i++ {
		a := args[i].text
		if i == 1 && !strings.HasPrefix(a, "-") {
			a = "-" + a // old style: "tar tvf x.tar"
		}
		switch {
		case a == "--list", a == "--diff", a == "--compare":
			mode += "t"
		case strings.HasPrefix(a, "--"):
			for _, m := range []string{"extract", "get", "create", "append", "update", "catenate", "concatenate", "delete"} {
				if strings.HasPrefix(m, strings.SplitN(a[2:], "=", 2)[0]) && len(a) > 3 {
					mode += "x"
				}
			}
		case strings.HasPrefix(a, "-"):
			for _, c := range a[1:] {
				switch c {
				case 't', 'd':
					mode += "t"
				case 'x', 'c', 'r', 'u', 'A':
					mode += "x"
				}
			}
		}
		if j := strings.IndexByte(a, 'f'); j > 0 && !strings.HasPrefix(a, "--") {
			v := a[j+1:]
			if v == "" && i+1 < len(args) {
				v = args[i+1].text
			}
			if strings.Contains(v, ":") && !slicesContainsText(args, "--force-local") {
				out = append(out, risk{at: i, opt: "-f", why: "names a remote archive, which tar reaches by running rsh"})
			}
		}
	}
	if mode == "" || strings.Contains(mode, "x") {
		out = append(out, risk{at: 1, opt: "tar", why: "creates or extracts files (a rule for tar covers listing: tar -tf)"})
	}
	return out
}

// wgetRisks: wget writes what it downloads unless told to write it to
// standard output (-O -), and -o/-a write a log, -e runs wgetrc commands.
func wgetRisks(args []shWord) []risk {
	t := &optTable{long: map[string]string{
		"output-file": effWrite, "append-output": effWrite, "execute": effReadCode, "config": effReadCode,
		"directory-prefix": effWriteDir, "save-cookies": effWrite, "warc-file": effWrite, "output-document": effWrite,
	}, short: map[byte]string{'o': effWrite, 'a': effWrite, 'e': effReadCode, 'P': effWriteDir, 'O': effWrite},
		valued: "oaeOPiBtTwQUDIX", abbrev: true}
	var out []risk
	for _, r := range t.scan(args) {
		if r.target != "-" { // -O - writes to standard output
			out = append(out, r)
		}
	}
	toStdout := slicesContainsText(args, "--spider")
	for _, r := range t.scan(args) {
		toStdout = toStdout || r.target == "-"
	}
	if !toStdout {
		out = append(out, risk{at: atEnd, opt: "wget", why: "writes what it downloads to a file (a rule for wget covers wget -O -)"})
	}
	return out
}

// unzipRisks: unzip extracts unless it lists, tests or prints.
func unzipRisks(args []shWord) []risk {
	for _, w := range args[1:] {
		if a := w.text; strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "lvtpcZz") {
			return nil
		}
	}
	return []risk{{at: atEnd, opt: "unzip", why: "extracts files (a rule for unzip covers unzip -l)"}}
}

// goRisks: the go command's flags that run programs or write files, its
// subcommands that run what the source names, and a go test of a package
// or file outside the workspace ws (testOutside).
func goRisks(args []shWord, ws string) []risk {
	out := goTestOutside(args, ws)
	flags := map[string]string{"exec": effRun, "toolexec": effRun, "vettool": effRun, "o": effWrite, "modfile": effWrite, "overlay": effReadCode, "C": goElsewhere}
	sub := ""
	for i := 1; i < len(args); i++ {
		a := args[i].text
		if !strings.HasPrefix(a, "-") {
			if sub == "" {
				sub = a
				switch a {
				case "run":
					out = append(out, risk{at: i, opt: "go run", why: "builds and runs a program"})
				case "generate":
					out = append(out, risk{at: i, opt: "go generate", why: "runs the commands written in the source"})
				case "tool":
					out = append(out, risk{at: i, opt: "go tool", why: effRun})
				case "install", "get":
					out = append(out, risk{at: i, opt: "go " + a, why: "installs programs or changes go.mod"})
				}
			}
			continue
		}
		name, val, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if sub == "env" && (name == "w" || name == "u") {
			out = append(out, risk{at: i, opt: "-" + name, why: "changes Go's configuration (GOFLAGS can make go run programs)"})
		}
		why, ok := flags[name]
		if !ok {
			continue
		}
		r := risk{at: i, opt: "-" + name, why: why}
		if why == effWrite {
			if has {
				r.target, r.lit = val, args[i].lit
			} else if i+1 < len(args) {
				r.target, r.lit = args[i+1].text, args[i+1].lit
			}
		}
		out = append(out, r)
	}
	return out
}

// npmRisks: package managers run the package's scripts (install, test,
// run, start, ...), which a rule naming only the manager does not cover.
func npmRisks(args []shWord) []risk {
	var out []risk
	scripts := npmScripts()
	sub := ""
	for i := 1; i < len(args); i++ {
		a := args[i].text
		if strings.HasPrefix(a, "-") {
			name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
			switch name {
			case "script-shell", "node-options", "call", "c", "userconfig", "globalconfig", "require", "r":
				out = append(out, risk{at: i, opt: "--" + name, why: effRun})
			}
			continue
		}
		if sub == "" {
			sub = a
			if scripts[a] {
				out = append(out, risk{at: i, opt: programName(args[0].text) + " " + a, why: "runs the package's scripts or programs"})
			}
		}
	}
	if sub == "" && programName(args[0].text) == "yarn" {
		out = append(out, risk{at: 0, opt: "yarn", why: "installs packages, which runs their scripts"})
	}
	return out
}

func slicesContainsText(args []shWord, s string) bool {
	for _, w := range args {
		if w.text == s {
			return true
		}
	}
	return false
}

// makeVarRisks lists make's NAME=value arguments that run code a rule for
// make does not show (review-sweep P1-2): MAKEFLAGS and its kin carry
// options (--eval, -f), SHELL and .SHELLFLAGS run every recipe line,
// MAKEFILES reads another Makefile, MAKE runs for every sub-make; a name
// make expands ("S$(E)HELL") could be any of them, "X!=cmd" runs cmd, and
// a value with "$" is make code ("X:=$(shell cmd)" runs at once). Any
// other variable (VERBOSE=1, CFLAGS=-O2) is the Makefile's to use.
func makeVarRisks(args []shWord) []risk {
	var out []risk
	for i := 1; i < len(args); i++ {
		w := args[i].text
		lhs, val, ok := strings.Cut(w, "=")
		if !ok || strings.HasPrefix(w, "-") {
			continue
		}
		name := strings.TrimRight(strings.TrimSpace(lhs), ":+?!")
		name = strings.TrimSpace(name)
		switch {
		case makeCodeVars()[name], strings.ContainsAny(lhs, "$!"), strings.Contains(val, "$"):
			out = append(out, risk{at: i, opt: name + "=", why: effRun + ": make reads this variable as options, a shell or code"})
		}
	}
	return out
}

// makeCodeVars are the variables whose value make itself runs or reads
// as options or Makefiles.
var makeCodeVars = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"MAKEFLAGS": true, "MFLAGS": true, "GNUMAKEFLAGS": true, "SHELL": true, ".SHELLFLAGS": true,
		"MAKEFILES": true, "MAKE": true, "MAKESHELL": true, "MAKE_COMMAND": true, "MAKEOVERRIDES": true}
})

// npmScripts are the package managers' subcommands that run the package's
// scripts or programs.
var npmScripts = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, c := range []string{"exec", "x", "run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop", "restart",
		"install", "i", "in", "ins", "add", "ci", "clean-install", "install-test", "it", "rebuild", "rb", "publish", "pack",
		"init", "create", "explore", "dlx", "set", "edit", "config", "c", "link", "ln", "update", "up", "upgrade"} {
		m[c] = true
	}
	return m
})

// pytestPlugins lists pytest's -p NAME, which imports the module NAME
// (any file's, with a path): only -p no:NAME, which turns a plugin off,
// is not one.
func pytestPlugins(args []shWord) []risk {
	var out []risk
	for i := 1; i < len(args); i++ {
		a := args[i].text
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--") || !strings.HasPrefix(a, "-") {
			continue
		}
		at := strings.IndexByte(a, 'p')
		if at < 0 || strings.IndexAny(a[1:at], "kmcoWrn") >= 0 {
			continue // no -p, or it is another option's value (-kp)
		}
		val := a[at+1:]
		if val == "" && i+1 < len(args) {
			val = args[i+1].text
		}
		if !strings.HasPrefix(val, "no:") {
			out = append(out, risk{at: i, opt: "-p", why: "imports a plugin module it names (any file's, with a path)"})
		}
	}
	return out
}
