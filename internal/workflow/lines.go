package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// lookup is a line finder over a map of field → line: a field that is not
// there is looked for at its enclosing field.
func lookup(m map[string]int) func(string) int {
	return func(field string) int {
		for f := field; ; {
			if n, ok := m[f]; ok {
				return n
			}
			i := strings.LastIndexAny(f, ".[")
			if i <= 0 {
				return 0
			}
			f = f[:i]
		}
	}
}

// jsonLines maps every field of a JSON document (phases[1].votes) to the
// line its key (or, in a list, its value) starts on.
func jsonLines(data []byte) func(string) int {
	m := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int {
		i := int(min(off, int64(len(data))))
		for i < len(data) && strings.IndexByte(" \t\r\n,:", data[i]) >= 0 {
			i++
		}
		return 1 + bytes.Count(data[:i], []byte("\n"))
	}
	var walk func(path string, depth int) bool
	walk = func(path string, depth int) bool {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil || depth > 64 {
			return false
		}
		if _, ok := m[path]; !ok && path != "" {
			m[path] = lineAt(off)
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				koff := dec.InputOffset()
				k, err := dec.Token()
				key, ok := k.(string)
				if err != nil || !ok {
					return false
				}
				child := key
				if path != "" {
					child = path + "." + key
				}
				m[child] = lineAt(koff)
				if !walk(child, depth+1) {
					return false
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !walk(fmt.Sprintf("%s[%d]", path, i), depth+1) {
					return false
				}
			}
			_, err = dec.Token()
		}
		return err == nil
	}
	walk("", 0)
	return lookup(m)
}

// tomlKey is a bare or quoted key at the start of a key = value line.
var tomlKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=`) })

// tomlLines maps the fields of a TOML document to their lines: table
// headers ([[phases]] is phases[N], [[phases.parallel]] the next task of
// the last phase) and the keys under them. Inline tables are found at the
// key that holds them.
func tomlLines(data []byte) func(string) int {
	m := map[string]int{}
	counts := map[string]int{} // array of tables → elements so far
	cur, multi := "", ""
	for i, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if multi != "" {
			if strings.Contains(t, multi) {
				multi = ""
			}
			continue
		}
		switch {
		case t == "" || t[0] == '#':
		case strings.HasPrefix(t, "[["):
			name, _, _ := strings.Cut(strings.TrimPrefix(t, "[["), "]]")
			cur = tomlTable(counts, strings.TrimSpace(name), true)
			m[cur] = i + 1
		case strings.HasPrefix(t, "["):
			name, _, _ := strings.Cut(strings.TrimPrefix(t, "["), "]")
			cur = tomlTable(counts, strings.TrimSpace(name), false)
			m[cur] = i + 1
		default:
			k := tomlKey().FindStringSubmatch(t)
			if k == nil {
				continue
			}
			key := strings.Trim(k[1], `"'`)
			if cur != "" {
				key = cur + "." + key
			}
			if _, ok := m[key]; !ok {
				m[key] = i + 1
			}
			for _, q := range []string{`"""`, `'''`} {
				if strings.Count(t, q)%2 == 1 {
					multi = q
				}
			}
		}
	}
	return lookup(m)
}

// tomlTable resolves a table header's dotted name to a field path: an
// array of tables on the way is its last element; the header of one
// ([[x]]) adds a new element.
func tomlTable(counts map[string]int, name string, array bool) string {
	parts := strings.Split(name, ".")
	path := ""
	for i, seg := range parts {
		seg = strings.Trim(strings.TrimSpace(seg), `"'`)
		if path != "" {
			path += "."
		}
		path += seg
		last := i == len(parts)-1
		switch {
		case last && array:
			n := counts[path]
			counts[path] = n + 1
			path += fmt.Sprintf("[%d]", n)
		case counts[path] > 0:
			path += fmt.Sprintf("[%d]", counts[path]-1)
		}
	}
	return path
}
