package codesnap

import (
	"bufio"
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
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("codesnap: the mount table: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint ... (proc(5)); the mount
		// point with space, tab, newline and backslash octal-escaped.
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		at := unescapeMount(fields[4])
		if at == real || strings.HasPrefix(at, real+"/") {
			return at, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("codesnap: the mount table: %w", err)
	}
	return "", nil
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
