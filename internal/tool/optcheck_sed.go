package tool

import "strings"

// sedRisks: -i/--in-place writes its operands; -f reads a script brood
// cannot see; the script's w/W commands and s///w write files, e and s///e
// run commands. --sandbox (GNU) refuses those, so the script is then safe.
func sedRisks(args []shWord) []risk {
	o := sedOptions(args)
	out := o.risks
	if o.inPlace >= 0 {
		if len(o.operands) == 0 {
			out = append(out, risk{at: o.inPlace, opt: "-i", why: "edits files in place"})
		}
		for _, j := range o.operands {
			out = append(out, risk{at: o.inPlace, opt: "-i", why: "edits files in place", target: args[j].text, lit: args[j].lit})
		}
	}
	if !o.sandbox {
		for _, s := range o.scripts {
			if cmd, why := sedScriptRisk(s); why != "" {
				out = append(out, risk{at: 1, opt: cmd, why: why})
			}
		}
	}
	return out
}

// sedOpts is what sed's options say.
type sedOpts struct {
	risks    []risk
	scripts  []string
	operands []int
	inPlace  int // the word of -i, or -1
	sandbox  bool
}

func sedOptions(args []shWord) sedOpts {
	o := sedOpts{inPlace: -1}
	given := false
	for i := 1; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				o.operands = append(o.operands, j)
			}
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, has := strings.Cut(a[2:], "=")
			switch {
			case name == "":
			case strings.HasPrefix("in-place", name) && len(name) >= 2:
				o.inPlace = i
			case strings.HasPrefix("file", name):
				o.risks = append(o.risks, risk{at: i, opt: "--file", why: effReadCode})
				given = true
			case strings.HasPrefix("expression", name) && len(name) >= 2:
				given = true
				if !has && i+1 < len(args) {
					i++
					val = args[i].text
				}
				o.scripts = append(o.scripts, val)
			case name == "sandbox":
				o.sandbox = true
			case strings.HasPrefix("line-length", name) && len(name) >= 2 && !has:
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			i = o.shortSed(args, i, &given)
		case !given:
			given = true
			o.scripts = append(o.scripts, a)
		default:
			o.operands = append(o.operands, i)
		}
	}
	return o
}

// shortSed reads one cluster of sed's short options and returns the index
// of the last word it used.
func (o *sedOpts) shortSed(args []shWord, i int, given *bool) int {
	a := args[i].text
	for j := 1; j < len(a); j++ {
		c := a[j]
		if c == 'i' {
			o.inPlace = i
			return i // the rest is the backup suffix
		}
		if c != 'e' && c != 'f' && c != 'l' {
			continue
		}
		if c == 'f' {
			o.risks = append(o.risks, risk{at: i, opt: "-f", why: effReadCode})
		}
		v := a[j+1:]
		if v == "" && i+1 < len(args) {
			i++
			v = args[i].text
		}
		if c == 'e' {
			o.scripts = append(o.scripts, v)
		}
		*given = *given || c != 'l'
		return i
	}
	return i
}

// sedScan reads a sed script.
type sedScan struct {
	s string
	i int
}

func (r *sedScan) skipTo(stop string) {
	for r.i < len(r.s) && strings.IndexByte(stop, r.s[r.i]) < 0 {
		if r.s[r.i] == '\\' {
			r.i++
		}
		r.i++
	}
}

// delimited reads one DELIM...DELIM part starting at the delimiter.
func (r *sedScan) delimited() bool {
	if r.i >= len(r.s) {
		return false
	}
	d := r.s[r.i]
	r.i++
	for r.i < len(r.s) && r.s[r.i] != d {
		if r.s[r.i] == '\\' {
			r.i++
		} else if r.s[r.i] == '\n' {
			return false
		}
		r.i++
	}
	if r.i >= len(r.s) {
		return false
	}
	r.i++
	return true
}

// pair reads the two parts of s/RE/REPL/ or y/A/B/, at the first delimiter.
func (r *sedScan) pair() bool {
	if !r.delimited() {
		return false
	}
	r.i-- // the middle delimiter starts the second part
	return r.delimited()
}

const unreadable = "cannot be read by brood"

// sedScriptRisk reads a sed script for the commands that write or run:
// w FILE, W FILE, e [CMD], and the s command's w and e flags. A script it
// cannot read counts as one that does.
func sedScriptRisk(s string) (string, string) {
	r := &sedScan{s: s}
	for r.i < len(s) {
		c := s[r.i]
		switch {
		case strings.IndexByte(" \t\n;{}!0123456789$,~+", c) >= 0:
			r.i++
			continue
		case c == '/' || c == '\\':
			if c == '\\' {
				r.i++
			}
			if !r.delimited() {
				return "sed script", unreadable
			}
			for r.i < len(s) && (s[r.i] == 'I' || s[r.i] == 'M') {
				r.i++
			}
			continue
		case c == '#':
			r.skipTo("\n")
			continue
		}
		r.i++
		if cmd, why := r.command(c); why != "" {
			return cmd, why
		}
	}
	return "", ""
}

// command reads the rest of the command c.
func (r *sedScan) command(c byte) (string, string) {
	switch c {
	case 's':
		if !r.pair() {
			return "sed script", unreadable
		}
		for ; r.i < len(r.s) && strings.IndexByte(";\n}", r.s[r.i]) < 0; r.i++ {
			switch r.s[r.i] {
			case 'w':
				return "s///w", effWrite
			case 'e':
				return "s///e", "runs the pattern space as a command"
			}
		}
	case 'y':
		if !r.pair() {
			return "sed script", unreadable
		}
	case 'w', 'W':
		return string(c), effWrite
	case 'e':
		return "e", "runs a command"
	case 'a', 'i', 'c', 'r', 'R':
		r.skipTo("\n") // text or a file name, to the end of the line
	case 'b', 't', 'T', ':', 'q', 'Q', 'l', 'L':
		r.skipTo(";\n}")
	case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', '=', 'z', 'F':
	default:
		return "sed script", unreadable
	}
	return "", ""
}
