package codesnap

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mountIn names a mount point at or under dir in this process's mount
// namespace ("" if none): a mount inside a cached checkout passes any stat
// check (stat, openat and git all see the mounted files) while a copy's
// overlay, its lower layer the checkout, reads what is underneath. A
// mount there is tampering (errPoisoned): the checkout is made again. The
// children's mount namespaces are copies of this one, so a mount they
// could see is here too. An unreadable mount table answers an error.
func mountIn(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	table, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("codesnap: the mount table: %w", err)
	}
	// Only a line holding dir as the table writes it can name a mount
	// point at or under it (the escapes are per byte, so a path's prefix
	// escapes to the escaped path's prefix): the others are not parsed
	// (before every call's copy; a worker's table holds a line per copy).
	want := []byte(escapeMount(real))
	for line := range bytes.Lines(table) {
		if !bytes.Contains(line, want) {
			continue
		}
		// id parent major:minor root mountpoint ... (proc(5)); the mount
		// point with space, tab, newline and backslash octal-escaped.
		fields := strings.Fields(string(line))
		if len(fields) < 5 {
			continue
		}
		at := unescapeMount(fields[4])
		if at == real || strings.HasPrefix(at, real+"/") {
			return at, nil
		}
	}
	return "", nil
}

// escapeMount escapes s as the mount table does (\ooo for space, tab,
// newline and backslash).
func escapeMount(s string) string {
	return strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", `\012`, `\`, `\134`).Replace(s)
}

// unescapeMount undoes mountinfo's \ooo escapes.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
