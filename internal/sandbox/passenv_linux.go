package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// passedSeals are the seals a passed memory file carries: no write, no
// growing or shrinking, no seal removed or added. Once they are on, no
// process (the parent, the child, one that reopens it through /proc)
// can change what it holds.
const passedSeals = unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL

// PassEnv gives cmd's child value under the environment name: as
// name=value where it is short (passInEnvMax), else in a memory file,
// written then sealed (passedSeals) and inherited by the child
// (cmd.ExtraFiles), whose descriptor the environment names. The child
// reads it with TakeEnv; the parent closes its copy once the child
// started (ClosePassed). Call it after anything that replaces cmd.Env or
// cmd.ExtraFiles wholesale.
func PassEnv(cmd *exec.Cmd, name string, value []byte) error {
	if len(value) <= passInEnvMax {
		cmd.Env = append(cmd.Env, name+"="+string(value)) // (one copy: Go converts in the concatenation)
		return nil
	}
	f, err := sealedFile(value)
	if err != nil {
		return fmt.Errorf("sandbox: pass %s (%d bytes) to the child in a sealed memory file: %w", name, len(value), err)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	cmd.Env = append(cmd.Env, name+"="+passedPrefix+strconv.Itoa(2+len(cmd.ExtraFiles)))
	return nil
}

// PassSealed is PassEnv for a value no other process may read, whatever
// its length: always in a sealed memory file the child inherits (never in
// its environment, which a process of the same user may read before the
// child makes itself undumpable). The child reads it with TakeEnv.
func PassSealed(cmd *exec.Cmd, name string, value []byte) error {
	f, err := sealedFile(value)
	if err != nil {
		return fmt.Errorf("sandbox: pass %s to the child in a sealed memory file: %w", name, err)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	cmd.Env = append(cmd.Env, name+"="+passedPrefix+strconv.Itoa(2+len(cmd.ExtraFiles)))
	return nil
}

// sealedFile is a memory file (close-on-exec in this process; the child's
// copy is placed by exec.Cmd) holding value, sealed.
func sealedFile(value []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(passedName, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_NOEXEC_SEAL)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3: no MFD_NOEXEC_SEAL
		fd, err = unix.MemfdCreate(passedName, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), passedName)
	if _, err := f.Write(value); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, passedSeals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal: %w", err)
	}
	return f, nil
}

// ClosePassed closes this process's copies of the memory files PassEnv
// gave cmd, once cmd started (or failed to): the child holds its own.
// Every other descriptor of cmd.ExtraFiles (a Layer, shared by many
// children) is left open.
func ClosePassed(cmd *exec.Cmd) {
	for _, f := range cmd.ExtraFiles {
		if f != nil && f.Name() == passedName {
			f.Close()
		}
	}
}

// passedFromCmd reads the memory file v ("memfd:N") names among cmd's
// ExtraFiles, where the parent put it.
func passedFromCmd(cmd *exec.Cmd, name, v string) (string, bool, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(v, passedPrefix))
	if err != nil || n < 3 || n-3 >= len(cmd.ExtraFiles) || cmd.ExtraFiles[n-3] == nil || cmd.ExtraFiles[n-3].Name() != passedName {
		return "", false, fmt.Errorf("sandbox: %s=%q names no memory file PassEnv gave the command", name, v)
	}
	s, err := readSealed(int(cmd.ExtraFiles[n-3].Fd()))
	if err != nil {
		return "", false, fmt.Errorf("sandbox: %s: %w", name, err)
	}
	return s, true, nil
}

// takePassed reads, then closes, the memory file the parent passed for
// name on descriptor v.
func takePassed(name, v string) (string, error) {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return "", fmt.Errorf("sandbox: %s=%s%s does not name a descriptor; start the child with sandbox.PassEnv", name, passedPrefix, v)
	}
	defer unix.Close(fd)
	link, err := os.Readlink("/proc/self/fd/" + v)
	if err != nil || !strings.HasPrefix(link, "/memfd:"+passedName+" ") {
		return "", fmt.Errorf("sandbox: %s names descriptor %d, which is not a memory file from the parent (%q)", name, fd, link)
	}
	s, err := readSealed(fd)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s: %w", name, err)
	}
	return s, nil
}

// readSealed is what the memory file fd holds, if it is sealed
// (passedSeals): read from its start, whatever its offset.
func readSealed(fd int) (string, error) {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&passedSeals != passedSeals {
		return "", fmt.Errorf("descriptor %d is not a sealed memory file (seals %#x, %v)", fd, seals, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", fmt.Errorf("stat descriptor %d: %w", fd, err)
	}
	buf := make([]byte, st.Size)
	for off := 0; off < len(buf); {
		n, err := unix.Pread(fd, buf[off:], int64(off))
		if err != nil {
			return "", fmt.Errorf("read descriptor %d: %w", fd, err)
		}
		if n == 0 {
			return "", fmt.Errorf("read descriptor %d: %d of %d bytes", fd, off, len(buf))
		}
		off += n
	}
	return string(buf), nil
}
