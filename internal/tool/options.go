package tool

import (
	"path"
	"slices"
	"strings"
	"sync"
)

// What a prefix rule such as Bash(git log:*) covers: the command it names
// with any arguments, except those known to write files or run programs
// (git log --output=FILE, find -exec, sed -i, sort -o, ...). The knowledge
// is data: one optTable per program, read by one scanner, plus a few
// programs whose risky part is not an option (a sed script's w command, an
// awk program's system(), tar's extraction) checked by their own function.

// risk is one reason a command is more than a prefix rule approved.
type risk struct {
	at     int    // index of the word in the command (program = 0)
	opt    string // the option or word that made it ("--output", "-exec", "xargs")
	why    string // what it does ("writes a file", "runs a program")
	target string // the file it writes, as written ("" when not known)
	lit    bool   // target is all the shell makes of it
	// guardOnly: the file is an operand of a program that exists to write
	// (cp, mv, rm): a rule naming the program covers it, but it is still
	// checked against brood's configuration.
	guardOnly bool
}

// atEnd places a risk after any rule's prefix: it is what the program does
// by default (wget downloads into a file), so no rule naming only the
// program covers it.
const atEnd = 1 << 30

// Effects of an option, as the scanner reports them.
const (
	effWrite    = "writes a file"
	effWriteDir = "writes files into a directory"
	effRun      = "runs a program"
	effReadCode = "reads commands or options from a file brood cannot check"
	// makeElsewhere: make -C DIR runs the Makefile there, which any
	// project could have put there.
	makeElsewhere = "runs the Makefile of another directory"
)

// optTable is what one program's options do.
type optTable struct {
	// long are long options (without the dashes) that write or run, with
	// what they do; effWrite and effWriteDir ones take the file as their
	// value ("--output=F" or "--output F").
	long map[string]string
	// short are single-letter options that write or run.
	short map[byte]string
	// valued are the short letters that take a value: the rest of the
	// word is that value, not more letters ("sort -t, -o F": -t takes ",").
	valued string
	// abbrev: long options may be abbreviated to any unique prefix
	// (getopt_long, git's parse-options): "--outp=F" is "--output=F".
	abbrev bool
	// words are whole words that write or run wherever they appear (find's
	// "-exec", "-delete").
	words map[string]string
	// plus: a word starting with "+" runs a command of the program (less).
	plus string
	// noDashDash: "--" does not end the options (find has none).
	noDashDash bool
	// writesOperands: every operand is a file the program writes (touch,
	// rm, ...); lastOperand: only the last one (cp, mv, ln). Such a program
	// exists to write: a rule for it covers them (guardOnly) unless
	// operandsCount is set (tee, which a rule allows for its output).
	writesOperands, lastOperand, operandsCount bool
}

// scan lists the risks of args (program first) by the table.
func (t *optTable) scan(args []shWord) []risk {
	var out []risk
	var operands []int
	for i := 1; i < len(args); i++ {
		a := args[i].text
		next := func() (string, bool) {
			if i+1 < len(args) {
				return args[i+1].text, args[i+1].lit
			}
			return "", true
		}
		switch {
		case a == "--" && !t.noDashDash:
			for j := i + 1; j < len(args); j++ {
				operands = append(operands, j)
			}
			i = len(args)
		case t.words[a] != "":
			out = append(out, risk{at: i, opt: a, why: t.words[a]})
		case t.plus != "" && strings.HasPrefix(a, "+"):
			out = append(out, risk{at: i, opt: "+", why: t.plus})
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, val, hasVal := strings.Cut(a[2:], "=")
			if long, why := t.longRisk(name); why != "" {
				r := risk{at: i, opt: "--" + long, why: why, lit: args[i].lit}
				if why == effWrite || why == effWriteDir {
					if hasVal {
						r.target = val
					} else {
						r.target, r.lit = next()
					}
				}
				out = append(out, r)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 && t.words == nil:
			out = append(out, t.shortRisks(args, i)...)
		default:
			operands = append(operands, i)
		}
	}
	if t.writesOperands || t.lastOperand {
		if t.lastOperand && len(operands) > 1 {
			operands = operands[len(operands)-1:]
		} else if t.lastOperand {
			operands = nil
		}
		for _, j := range operands {
			if f := args[j].text; f == "/dev/null" || f == "/dev/stdout" || f == "/dev/stderr" {
				continue
			}
			out = append(out, risk{at: j, opt: args[0].text, why: effWrite, target: args[j].text, lit: args[j].lit, guardOnly: !t.operandsCount})
		}
	}
	return out
}

// longRisk returns the risky long option name is (or abbreviates) and what
// it does.
func (t *optTable) longRisk(name string) (string, string) {
	if why, ok := t.long[name]; ok {
		return name, why
	}
	if !t.abbrev || name == "" {
		return "", ""
	}
	keys := make([]string, 0, len(t.long))
	for k := range t.long {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, name) {
			return k, t.long[k]
		}
	}
	return "", ""
}

// shortRisks reads one cluster of short options ("-sSLo", "-oFILE").
func (t *optTable) shortRisks(args []shWord, i int) []risk {
	a := args[i].text
	if strings.Trim(a[1:], "0123456789") == "" {
		return nil // -5: a number (head -5, git log -3)
	}
	var out []risk
	for j := 1; j < len(a); j++ {
		c := a[j]
		valued := strings.IndexByte(t.valued, c) >= 0
		if why, ok := t.short[c]; ok {
			r := risk{at: i, opt: "-" + string(c), why: why, lit: args[i].lit}
			if why == effWrite || why == effWriteDir {
				switch {
				case j+1 < len(a):
					r.target = a[j+1:]
				case i+1 < len(args):
					r.target, r.lit = args[i+1].text, args[i+1].lit
				}
			}
			out = append(out, r)
		}
		if valued {
			break
		}
	}
	return out
}

// Tables of the programs whose options only, by name, write or run.
var optTables = sync.OnceValue(func() map[string]*optTable {
	return map[string]*optTable{
		"sort": {long: map[string]string{"output": effWrite, "compress-program": effRun},
			short: map[byte]string{'o': effWrite}, valued: "koStT", abbrev: true},
		"tee": {writesOperands: true, operandsCount: true, abbrev: true},
		"find": {words: map[string]string{
			"-exec": effRun, "-execdir": effRun, "-ok": effRun, "-okdir": effRun,
			"-delete": "deletes files", "-fprint": effWrite, "-fprint0": effWrite,
			"-fprintf": effWrite, "-fls": effWrite,
		}, noDashDash: true},
		"fd": {long: map[string]string{"exec": effRun, "exec-batch": effRun},
			short: map[byte]string{'x': effRun, 'X': effRun}, valued: "edEtcjS", abbrev: true},
		"rg": {long: map[string]string{"pre": effRun, "hostname-bin": effRun}, abbrev: true,
			valued: "ABCEefgMmrTtj"},
		"less": {long: map[string]string{"log-file": effWrite, "LOG-FILE": effWrite,
			"lesskey-file": effReadCode, "lesskey-src": effReadCode, "lesskey-content": effReadCode},
			short:  map[byte]string{'o': effWrite, 'O': effWrite, 'k': effReadCode},
			valued: "bhjkoOpPtTxyz#", abbrev: true, plus: "runs a less command at start (\"+!cmd\" starts a shell)"},
		"more": {plus: "runs a command of more at start"},
		"man": {long: map[string]string{"pager": effRun, "html": effRun, "config-file": effReadCode},
			short: map[byte]string{'P': effRun, 'H': effRun, 'C': effReadCode}, valued: "PHMSCLmpeRE", abbrev: true},
		"curl": {long: map[string]string{
			"output": effWrite, "remote-name": "writes a file named by the server", "remote-name-all": "writes files named by the server",
			"dump-header": effWrite, "cookie-jar": effWrite, "config": effReadCode, "trace": effWrite,
			"trace-ascii": effWrite, "stderr": effWrite, "libcurl": effWrite, "etag-save": effWrite,
			"hsts": effWrite, "alt-svc": effWrite, "output-dir": effWriteDir, "upload-file": "sends a file",
		}, short: map[byte]string{'o': effWrite, 'O': "writes a file named by the server", 'D': effWrite,
			'c': effWrite, 'K': effReadCode, 'T': "sends a file"},
			valued: "abcdDeEFHKmoPQrtTuUwxXYyzC", abbrev: false},
		"make": {long: map[string]string{"eval": effRun, "file": effReadCode, "makefile": effReadCode, "directory": makeElsewhere, "include-dir": effReadCode},
			short: map[byte]string{'E': effRun, 'f': effReadCode, 'C': makeElsewhere, 'I': effReadCode}, valued: "CfIjloWE", abbrev: true},
		"zip": {long: map[string]string{"unzip-command": effRun, "test": effRun},
			short: map[byte]string{'T': effRun}, valued: "bnPtx", abbrev: true}, // Info-ZIP takes a unique prefix: --tes, --unzip-c=
		"cmake": {long: map[string]string{"preset": effReadCode, "workflow": effRun},
			short:  map[byte]string{'P': "runs a cmake script", 'E': "runs a command of cmake's (env, chdir, ... run programs)", 'C': effReadCode},
			valued: "SBCDUGTAPEWj", abbrev: false},
		"pytest": {long: map[string]string{"override-ini": effReadCode, "config-file": effReadCode, "pyargs": "imports the packages it names",
			"basetemp": "empties and writes a directory", "junitxml": effWrite, "junit-xml": effWrite, "debug": effWrite, "confcutdir": effReadCode},
			short: map[byte]string{'o': effReadCode, 'c': effReadCode}, valued: "kmpcoWrn", abbrev: true},
		// Programs that write their operands: a rule for them allows writing,
		// but never brood's configuration (configwrite.go).
		"touch":    {writesOperands: true},
		"rm":       {writesOperands: true},
		"truncate": {writesOperands: true, valued: "sr"},
		"shred":    {writesOperands: true},
		"unlink":   {writesOperands: true},
		"chmod":    {writesOperands: true},
		"mv":       {writesOperands: true, long: map[string]string{"target-directory": effWriteDir}, short: map[byte]string{'t': effWriteDir}, valued: "tS", abbrev: true},
		"cp":       {lastOperand: true, long: map[string]string{"target-directory": effWriteDir}, short: map[byte]string{'t': effWriteDir}, valued: "tS", abbrev: true},
		"ln":       {lastOperand: true, long: map[string]string{"target-directory": effWriteDir}, short: map[byte]string{'t': effWriteDir}, valued: "tS", abbrev: true},
		"rsync": {lastOperand: true, long: map[string]string{"rsh": effRun, "rsync-path": effRun, "temp-dir": effWriteDir, "write-batch": effWrite, "only-write-batch": effWrite, "log-file": effWrite},
			short: map[byte]string{'e': effRun, 'T': effWriteDir}, valued: "eTBfM", abbrev: true},
		"scp":     {lastOperand: true, short: map[byte]string{'S': effRun, 'o': "sets an ssh option (ProxyCommand runs a program)", 'F': effReadCode}, valued: "cDFiJlPSoX"},
		"install": {lastOperand: true, long: map[string]string{"target-directory": effWriteDir}, short: map[byte]string{'t': effWriteDir}, valued: "tSgmo", abbrev: true},
	}
})

// programName is the name a program word runs (its path dropped).
func programName(w string) string { return path.Base(w) }
