package tool

import "strings"

// splitCommand breaks a shell command line into the simple commands a
// permission check must see one by one: the parts joined by && || ; | & or a
// newline, plus the commands inside $(...), <(...), >(...) and backticks,
// whose output the outer command would use. Quotes are respected ('...' is
// literal; "..." still expands substitutions), so `echo "a && b"` is one
// command. The split errs on the side of more parts: a part the checker
// cannot match only ever leads to an ask, never to a wrongful allow.
// The outer command keeps its substitution text, so "echo $(rm x)" yields
// both "rm x" and "echo $(rm x)", and each must be allowed.
func splitCommand(line string) (parts []string) {
	var cur strings.Builder
	flush := func() {
		if p := strings.TrimSpace(cur.String()); p != "" {
			parts = append(parts, p)
		}
		cur.Reset()
	}
	inSingle, inDouble := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inSingle:
			cur.WriteByte(c)
			if c == '\'' {
				inSingle = false
			}
			continue
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(c)
			cur.WriteByte(line[i+1])
			i++
			continue
		case c == '\'' && !inDouble:
			inSingle = true
			cur.WriteByte(c)
			continue
		case c == '"':
			inDouble = !inDouble
			cur.WriteByte(c)
			continue
		}
		// Substitutions: $( ... ), <( ... ), >( ... ) and ` ... `.
		if (c == '$' || (c == '<' || c == '>') && !inDouble) && i+1 < len(line) && line[i+1] == '(' {
			end := matchParen(line, i+1)
			inner := line[i+2:]
			if end >= 0 {
				inner = line[i+2 : end]
			} else {
				end = len(line) - 1
			}
			cur.WriteString(line[i : end+1])
			i = end
			if c == '$' && strings.HasPrefix(inner, "(") {
				continue // $(( arithmetic )) runs no command.
			}
			parts = append(parts, splitCommand(inner)...)
			continue
		}
		if c == '`' {
			end := strings.IndexByte(line[i+1:], '`')
			if end < 0 {
				end = len(line) - i - 1
			}
			parts = append(parts, splitCommand(line[i+1:i+1+end])...)
			cur.WriteString(line[i:min(i+2+end, len(line))])
			i += end + 1
			continue
		}
		if inDouble {
			cur.WriteByte(c)
			continue
		}
		switch c {
		case ';', '\n', '|':
			flush()
		case '&':
			// "2>&1" and "&>" are redirections, not separators.
			if i > 0 && (line[i-1] == '>' || line[i-1] == '<') || i+1 < len(line) && line[i+1] == '>' {
				cur.WriteByte(c)
				continue
			}
			flush()
		case '(', ')':
			// A subshell: its contents are commands of their own.
			flush()
		case '{', '}':
			if isWordBoundary(line, i) {
				flush() // a group, like a subshell
				continue
			}
			cur.WriteByte(c)
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return parts
}

// isWordBoundary reports whether the brace at i stands alone as a shell word
// (a group), rather than being part of a word like ${HOME} or a{b,c}.
func isWordBoundary(s string, i int) bool {
	before := i == 0 || strings.IndexByte(" \t\n;&|", s[i-1]) >= 0
	after := i+1 == len(s) || strings.IndexByte(" \t\n;&|", s[i+1]) >= 0
	return before && after
}

// matchParen returns the index of the parenthesis closing the one at open,
// or -1 when it is unbalanced, skipping quoted text.
func matchParen(s string, open int) int {
	depth := 0
	inSingle, inDouble := false, false
	for i := open; i < len(s); i++ {
		c := s[i]
		switch {
		case inSingle:
			if c == '\'' {
				inSingle = false
			}
		case c == '\\':
			i++
		case c == '\'' && !inDouble:
			inSingle = true
		case c == '"':
			inDouble = !inDouble
		case inDouble:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
