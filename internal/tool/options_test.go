package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// optionRules are the prefix rules the option tests run under.
var optionRules = []string{
	"Bash(git log:*)", "Bash(git diff:*)", "Bash(git show:*)", "Bash(find:*)", "Bash(sed:*)", "Bash(gsed:*)",
	"Bash(sort:*)", "Bash(tee:*)", "Bash(xargs:*)", "Bash(awk:*)", "Bash(gawk:*)", "Bash(tar:*)", "Bash(rg:*)",
	"Bash(less:*)", "Bash(man:*)", "Bash(curl:*)", "Bash(wget:*)", "Bash(go test:*)", "Bash(npm test:*)",
	"Bash(npx:*)", "Bash(timeout:*)", "Bash(env:*)", "Bash(nice:*)", "Bash(command:*)", "Bash(exec:*)",
	"Bash(sh:*)", "Bash(bash:*)", "Bash(echo:*)", "Bash(uniq:*)", "Bash(dd:*)", "Bash(make:*)", "Bash(cargo:*)",
	"Bash(yarn:*)", "Bash(unzip:*)", "Bash(fd:*)", "Bash(cp:*)", "Bash(cat:*)", "Bash(head:*)", "Bash(setsid:*)", "Bash(ionice:*)", "Bash(rsync:*)", "Bash(scp:*)",
	"Bash(zip:*)", "Bash(git difftool:*)", "Bash(pytest:*)", "Bash(cmake:*)",
}

// TestPrefixRulesRefuseOptionsThatWriteOrRun: a rule that names a program
// does not cover the options (and words) that make it write files or run
// programs, however they are spelt; the ask names the option.
func TestPrefixRulesRefuseOptionsThatWriteOrRun(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	p, err := NewPermissions("default", optionRules, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := NewPermissions("default", []string{"Bash(git:*)", "Bash(go:*)", "Bash(npm:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := NewPermissions("default", []string{"Bash(/usr/bin/git log:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	brood := brood(t)
	tests := []struct {
		perms *Permissions
		cmd   string
		opt   string // what the reason must name
	}{
		// git's diff family: --output and its spellings
		{p, "git log --output=/tmp/x", "--output"},
		{p, "git log --output /tmp/x", "--output"},
		{p, "git log '--output=/tmp/x'", "--output"},
		{p, `git log "--output"=/tmp/x`, "--output"},
		{p, "git log --out\"put\"=/tmp/x", "--output"},
		{p, `git log \-\-output=/tmp/x`, "--output"},
		{p, "git log --outp=/tmp/x", "--output"},
		{p, "git log -p --output=$HOME/.bashrc", "--output"},
		{p, "git log --oneline --output=~/.bashrc -3", "--output"},
		{p, "git diff --no-index /etc/passwd x", "--no-index"},
		{p, "git diff --no-ind /etc/passwd x", "--no-index"},
		{p, "git diff --ext-diff", "--ext-diff"},
		{p, "git show --textconv HEAD", "--textconv"},
		{p, "git show --textc HEAD", "--textconv"},
		{p, "git diff HEAD --output=x && git log", "--output"},
		// words the shell computes could be any option
		{p, "git log $(echo --output=/tmp/x)", "$(echo --output=/tmp/x)"},
		{p, "git log `echo --output=x`", "echo --output=x"},
		{p, "git log *", "*"},
		{p, "git log {--output=x,-1}", "{--output=x,-1}"},
		{p, "git log $OPT", "$OPT"},
		{p, "git log -p $(echo --output=/tmp/x)", "$(echo --output=/tmp/x)"},
		{p, "git log -m $(echo --output=/tmp/x)", "$(echo --output=/tmp/x)"},
		{all, "git grep -F $(git log -1 --format=-Ovim) x", "$(git log -1 --format=-Ovim)"},
		{p, "git log -$(echo -output=/tmp/x)", "$(echo"},
		{p, "sort -u$(echo o/tmp/x) f", ""},
		{p, "git log --output=\"$(echo /tmp/x)\"", "--output"},
		// git's global options and subcommands, under a rule for all of git
		{all, "git -c alias.l='!touch pwned' l", "-c"},
		{all, "git -c core.pager='touch pwned' log", "-c"},
		{all, "git --config-env=core.pager=X log", "--config-env"},
		{all, "git --exec-path=/tmp log", "--exec-path"},
		{all, "git -C /tmp status", "-C"},
		{all, "git --git-dir=/tmp/x/.git log", "--git-dir"},
		{all, "git --work-tree /tmp status", "--work-tree"},
		{all, "git format-patch -o /tmp HEAD~1", "-o"},
		{all, "git format-patch -o/tmp HEAD~1", "-o"},
		{all, "git format-patch --output-directory=/tmp HEAD~1", "--output-directory"},
		{all, "git grep -Ovim x", "-O"},
		{all, "git grep --open-files-in-pager=vim x", "--open-files-in-pager"},
		{all, "git rebase -x 'touch pwned' HEAD~2", "-x"},
		{all, "git rebase --exec='touch pwned' HEAD~2", "--exec"},
		{all, "git fetch --upload-pack='touch pwned' origin", "--upload-pack"},
		{all, "git pull --upload-p='touch pwned'", "--upload-pack"},
		{all, "git ls-remote -u 'touch pwned' origin", "-u"},
		{all, "git clone -u 'touch pwned' x y", "-u"},
		{all, "git clone --template=/tmp/t x y", "--template"},
		{all, "git clone -c core.fsmonitor=x x y", "-c"},
		{all, "git push --receive-pack=x origin", "--receive-pack"},
		{all, "git archive -o /tmp/x.tar HEAD", "-o"},
		{all, "git archive --remote=x HEAD", "--remote"},
		{all, "git difftool", "git difftool"},
		{all, "git submodule foreach 'touch pwned'", "foreach"},
		{all, "git bisect run ./x.sh", "run"},
		{all, "git config core.pager 'touch pwned'", "git config"},
		{all, "git config --add alias.x '!touch pwned'", "git config"},
		{all, "git bundle create /tmp/x.bundle HEAD", "create"},
		{all, "git hook run pre-commit", "git hook"},
		{all, "git lg --output=/tmp/x", "--output"},
		// find
		{p, `find . -exec touch {} \;`, "-exec"},
		{p, "find . -name x -execdir sh -c id {} +", "-execdir"},
		{p, "find . -delete", "-delete"},
		{p, "find . '-delete'", "-delete"},
		{p, "find . -fprint /tmp/x", "-fprint"},
		{p, "find . -fprintf /tmp/x %p", "-fprintf"},
		{p, "find . -fls /tmp/x", "-fls"},
		{p, "find . -name x -ok rm {} ';'", "-ok"},
		// sed
		{p, "sed -i s/a/b/ f", "-i"},
		{p, "sed -ni s/a/b/ f", "-i"},
		{p, "sed -Ei.bak s/a/b/ f", "-i"},
		{p, "sed --in-place=.bak s/a/b/ f", "-i"},
		{p, "sed --in s/a/b/ f", "-i"},
		{p, "sed 'w /tmp/x' f", "w"},
		{p, "sed '/x/w /tmp/x' f", "w"},
		{p, "sed 's/a/b/w /tmp/x' f", "s///w"},
		{p, "sed 's/a/b/gw /tmp/x' f", "s///w"},
		{p, "sed 's|a|b|e' f", "s///e"},
		{p, "sed '1e touch pwned' f", "e"},
		{p, "sed -n '1{p;e id\n}' f", "e"},
		{p, "sed -f script.sed f", "-f"},
		{p, "sed -e p -e 'W /tmp/x' f", "W"},
		{p, "sed --expression='w /tmp/x' f", "w"},
		{p, "gsed -i s/a/b/ f", "-i"},
		// sort
		{p, "sort -o /tmp/x f", "-o"},
		{p, "sort -uo/tmp/x f", "-o"},
		{p, "sort --output=/tmp/x f", "--output"},
		{p, "sort --out=/tmp/x f", "--output"},
		{p, "sort --compress-program=x f", "--compress-program"},
		// tee, xargs, awk
		{p, "echo x | tee /tmp/x", "tee"},
		{p, "echo x | tee -a /tmp/x", "tee"},
		{p, "echo f | xargs rm", "xargs"},
		{p, "echo f | xargs -0 cat", "xargs"},
		{p, `awk 'BEGIN{system("touch pwned")}'`, "system()"},
		{p, `awk '{print > "/tmp/x"}' f`, "print >"},
		{p, `awk '{printf "%s", $0 >> "/tmp/x"}' f`, "print >"},
		{p, `awk '{print | "sh"}' f`, "|"},
		{p, `awk 'BEGIN{"id" | getline x}'`, "|"},
		{p, "awk -f prog.awk f", "-f"},
		{p, "gawk --profile=/tmp/x 1", "--profile"},
		{p, "gawk -l x 1", "-l"},
		// tar, unzip, rg, less, man, curl, wget
		{p, "tar -xf a.tar", "tar"},
		{p, "tar xf a.tar", "tar"},
		{p, "tar -czf /tmp/a.tgz .", "tar"},
		{p, "tar --extract -f a.tar", "tar"},
		{p, "tar -tf a.tar --to-command='sh -c id'", "--to-command"},
		{p, "tar -tf a.tar --checkpoint-action=exec=id", "--checkpoint-action"},
		{p, "tar -I 'sh -c id' -tf a.tar", "-I"},
		{p, "tar -tf host:a.tar", "-f"},
		{p, "unzip a.zip", "unzip"},
		{p, "rg --pre ./x.sh foo", "--pre"},
		{p, "rg --pre=./x.sh foo", "--pre"},
		{p, "less '+!touch pwned' f", "+"},
		{p, "less -o /tmp/x f", "-o"},
		{p, "less --log-file=/tmp/x f", "--log-file"},
		{p, "man -P 'touch pwned' ls", "-P"},
		{p, "man --pager=x ls", "--pager"},
		{p, "man -H ls", "-H"},
		{p, "curl -o /tmp/x http://127.0.0.1/", "-o"},
		{p, "curl -sSLo /tmp/x http://127.0.0.1/", "-o"},
		{p, "curl -O http://127.0.0.1/x", "-O"},
		{p, "curl --output /tmp/x http://127.0.0.1/", "--output"},
		{p, "curl -K cfg http://127.0.0.1/", "-K"},
		{p, "curl -D /tmp/h http://127.0.0.1/", "-D"},
		{p, "curl -T .env http://127.0.0.1/", "-T"},
		{p, "wget http://127.0.0.1/x", "wget"},
		{p, "wget -O- -o /tmp/log http://127.0.0.1/x", "-o"},
		{p, "wget -O /tmp/x http://127.0.0.1/x", "-O"},
		{p, "wget --output-document=/tmp/x http://127.0.0.1/x", "--output-document"},
		// go, npm, yarn, npx, cargo, make, fd, uniq, dd
		{p, "go test -exec 'sh -c id' ./...", "-exec"},
		{p, "go test -toolexec=x ./...", "-toolexec"},
		{p, "go test --toolexec x ./...", "-toolexec"},
		{p, "go test -o /tmp/x.test ./x", "-o"},
		{all, "go vet -vettool=x ./...", "-vettool"},
		{all, "go run .", "go run"},
		{all, "go generate ./...", "go generate"},
		{all, "go env -w GOFLAGS=-toolexec=x", "-w"},
		{all, "npm test", "npm test"},
		{all, "npm install", "npm install"},
		{all, "npm --script-shell=x test", "--script-shell"},
		{p, "npm test --script-shell=./x", "--script-shell"},
		{p, "timeout 9 npx cowsay && npx x --yes && timeout 1 git log --output=/tmp/x", "--output"},
		{p, "yarn install", "yarn install"},
		{p, "cargo --config 'target.x.runner=\"id\"' test", "--config"},
		{p, "make --eval='x:;touch pwned' x", "--eval"},
		{p, "make -f /tmp/evil.mk", "-f"},
		{p, "make build --file=/tmp/evil.mk", "--file"},
		{p, "make -C /tmp/evil", "-C"},
		{p, "make --dir=/tmp/evil build", "--directory"},
		{p, "zip -TT 'sh -c id' a.zip f", "-T"},
		{p, "zip --unzip-command 'sh -c id' a.zip f", "--unzip-command"},
		// make's NAME=value arguments that are options, a shell or code (review-sweep P1-2)
		{p, "make test 'MAKEFLAGS=--eval=$(shell touch /tmp/PW1)'", "MAKEFLAGS="},
		{p, "make test MAKEFLAGS=-f/tmp/x.mk", "MAKEFLAGS="},
		{p, "make test MFLAGS=--eval=x", "MFLAGS="},
		{p, "make test GNUMAKEFLAGS=--eval=x", "GNUMAKEFLAGS="},
		{p, "make test SHELL=/any/program", "SHELL="},
		{p, "make SHELL=/tmp/evil test", "SHELL="},
		{p, "make test SHELL:=/tmp/evil", "SHELL="},
		{p, "make test ' SHELL = /tmp/evil'", "SHELL="},
		{p, "make test .SHELLFLAGS=-c", ".SHELLFLAGS="},
		{p, "make test MAKEFILES=/tmp/x.mk", "MAKEFILES="},
		{p, "make test MAKE=/tmp/evil", "MAKE="},
		{p, "make test 'S$(E)HELL=/tmp/evil'", "S$(E)HELL="},
		{p, "make test 'X!=touch pw'", "X="},
		{p, "make test 'X:=$(shell touch pw)'", "X="},
		// review-sweep P2-1: git difftool's command, pytest's plugins, cmake's scripts
		{p, "git difftool -x 'sh -c id'", "-x"},
		{p, "git difftool --extcmd='sh -c id' HEAD", "--extcmd"},
		{p, "git difftool --extc 'sh -c id'", "--extcmd"},
		{p, "git difftool -yx 'sh -c id'", "-x"},
		{p, "pytest -p /tmp/evil", "-p"},
		{p, "pytest -pevil tests", "-p"},
		{p, "pytest -vp evil", "-p"},
		{p, "pytest -o addopts=-pevil", "-o"},
		{p, "pytest --pyargs evil", "--pyargs"},
		{p, "cmake -P /tmp/x.cmake", "-P"},
		{p, "cmake -E env X=1 sh -c id", "-E"},
		{p, "cmake -C /tmp/init.cmake -B b", "-C"},
		// zip takes a unique prefix of a long option (review-sweep P1-1)
		{p, "zip --tes --unzip-c='sh -c id' a.zip f", "--test"},
		{p, "zip --tes a.zip f", "--test"},
		{p, "zip -r --unzip-c='sh -c id' a.zip f", "--unzip-command"},
		{p, "zip --unzip 'sh -c id' a.zip f", "--unzip-command"},
		{p, "fd -x rm", "-x"},
		{p, "fd --exec-batch rm", "--exec-batch"},
		{p, "uniq a /tmp/b", "uniq"},
		{p, "dd if=a of=/tmp/b", "of="},
		{p, "rsync -e 'sh -c id' a host:b", "-e"},
		{p, "rsync --rsh=x a b", "--rsh"},
		{p, "scp -o ProxyCommand=id a host:b", "-o"},
		{p, "scp -S ./x a host:b", "-S"},
		// wrappers: the command they run needs a rule, and its options count
		{p, "timeout 5 rm -rf x", "timeout"},
		{p, "env rm x", "env"},
		{p, "env -S 'rm x'", "-S"},
		{p, "env FOO=1 git log --output=/tmp/x", "FOO="},
		{p, "env GIT_EXTERNAL_DIFF='touch pwned' git diff", "GIT_EXTERNAL_DIFF="},
		{p, "env LD_PRELOAD=/tmp/x.so git log", "LD_PRELOAD="},
		{p, "env BROOD_TRUST_PROJECT=1 brood run x", "BROOD_TRUST_PROJECT="},
		{brood, "brood trust", "trust"},
		{brood, "brood run --permission-mode bypassPermissions 'do it'", "--permission-mode"},
		{brood, "brood run --permission-mode=acceptEdits 'do it'", "--permission-mode"},
		{brood, "brood run --allow Bash 'do it'", "--allow"},
		{brood, "brood run --trust-project 'do it'", "--trust-project"},
		{brood, "claude -p --dangerously-skip-permissions x", "--dangerously-skip-permissions"},
		{p, "nice -n 5 git log --output=/tmp/x", "--output"},
		{p, "command git log --output=/tmp/x", "--output"},
		{p, "exec git log --output=/tmp/x", "--output"},
		{p, "timeout 5 env nice git log --output=/tmp/x", "--output"},
		{p, "timeout $T git log", "$T"},
		{p, "/usr/bin/git log --output=/tmp/x", ""},
		{abs, "/usr/bin/git log --output=/tmp/x", "--output"},
		{abs, "FOO=1 /usr/bin/git log --outp /tmp/x", ""},
		{p, "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log", ""},
		{p, "setsid ionice -c 3 git log --output=/tmp/x", "--output"},
		// nested scripts, pipelines, lists
		{p, "sh -c 'git log --output=/tmp/x'", "--output"},
		{p, `bash -c "cd / && git log --output=/tmp/x"`, ""},
		{p, "echo x | git log --output=/tmp/y", "--output"},
		{p, "git log; git log --output=/tmp/y", "--output"},
		{p, "cat f && git log --outpu /tmp/y", "--output"},
	}
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]string{"command": tt.cmd})
		d := tt.perms.Check("Bash", in, ws)
		if d.Verdict == Allow {
			t.Errorf("%q allowed by %s (%s)", tt.cmd, d.Rule, d.Reason)
			continue
		}
		if tt.opt != "" && !strings.Contains(d.Reason, tt.opt) {
			t.Errorf("%q: %v, the reason does not name %q: %s", tt.cmd, d.Verdict, tt.opt, d.Reason)
		}
	}
}

// TestPrefixRulesStillCoverWhatIsSafe: the same rules still allow the
// everyday spellings, and a rule that names the risky part itself (or the
// exact line, or all of Bash) covers it.
func TestPrefixRulesStillCoverWhatIsSafe(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	p, err := NewPermissions("default", optionRules, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := NewPermissions("default", []string{"Bash(git:*)", "Bash(go:*)", "Bash(npm run lint:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	named, err := NewPermissions("default", []string{"Bash(go run:*)", "Bash(git log --output=out.txt)", "Bash(sed -i:*)", "Bash(timeout 60 go test:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := NewPermissions("default", []string{"Bash"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	brood := brood(t)
	tests := []struct {
		perms *Permissions
		cmd   string
	}{
		{p, "git log --oneline -5"}, {p, "git log -p --stat"}, {p, "git log --format=%H -n 3"},
		{p, "git log -- --output=x"}, {p, "git diff HEAD~1 --stat"}, {p, "git show HEAD:go.mod"},
		{p, "git log --no-ext-diff --no-textconv -p"}, {p, "git diff --name-only | head -5"},
		{all, "git -C sub status"}, {all, "git --no-pager log -3"}, {all, "git config --get user.name"},
		{all, "git config user.name"}, {all, "git config -l"}, {all, "git status --porcelain"},
		{all, "git branch --contains HEAD"}, {all, "git format-patch --to=a@b.c -1"}, {all, "git commit -m 'fix: x'"},
		{all, "go test -run X -count=1 ./..."}, {all, "go build ./..."}, {all, "go vet ./..."}, {all, "go env GOPATH"},
		{all, "npm run lint -- --fix"},
		{all, "git commit -m \"$(cat <<'EOF'\nfix: x\n\nbody\nEOF\n)\""}, {all, "git commit -am \"$(cat msg.txt)\""},
		{all, "git log --author=\"$(git config user.name)\" -3"}, {p, "git log --since=\"$(git log -1 --format=%cI)\""},
		{p, "find . -name '*.go' -type f"}, {p, "find . -newer x -print"}, {p, "find . -maxdepth 2 -print0"},
		{p, "sed -n 1,5p f"}, {p, "sed 's/a/b/g' f"}, {p, "sed -e 's/x/y/' -e '/^#/d' f"}, {p, "sed 's/new/wee/' f"},
		{p, "sed 's|a|b|gI' f"}, {p, "sed --sandbox 'w x' f"}, {p, "sed -E 's/(a)/\\1/;1d;$a end' f"},
		{p, "sort -u f"}, {p, "sort -t, -k2 f"}, {p, "sort -to f"}, {p, "sort -rn f | head -3"},
		{p, "awk '{print $1}' f"}, {p, "awk '$3 > 100' f"}, {p, "awk -F: '{print $1}' /etc/passwd"},
		{p, "awk '{ if ($1 > 5) print $2 }' f"}, {p, "awk 'a || b' f"}, {p, `awk '{print "a|b"}' f`},
		{p, "tar -tf a.tar"}, {p, "tar tvf a.tar"}, {p, "unzip -l a.zip"}, {p, "rg -n foo"}, {p, "rg --pretty foo"},
		{p, "less f"}, {p, "man ls"}, {p, "curl -s http://127.0.0.1/"}, {p, "curl -fsSL -H 'Accept: x' http://127.0.0.1/"},
		{p, "wget -qO- http://127.0.0.1/"}, {p, "wget -O - http://127.0.0.1/"}, {p, "wget -q --output-document=- http://127.0.0.1/"}, {p, "wget --spider http://127.0.0.1/"}, {p, "go test -run X ./..."},
		{p, "make build"}, {p, "make -j4 test"}, {p, "make -k -n all"}, {p, "make test VERBOSE=1"}, {p, "git difftool HEAD~1"}, {p, "pytest -q -k 'a and b' tests"}, {p, "pytest -p no:cacheprovider"},
		{p, "cmake -B build -S . -DCMAKE_BUILD_TYPE=Release"}, {p, "cmake --build build -j4"}, {p, "make CFLAGS=-O2 all"}, {p, "zip -r out.zip src"}, {p, "zip -q out.zip a b"},
		{p, "npm test"}, {p, "timeout 60 go test ./..."}, {p, "env -u HOME go test ./..."}, {p, "command -v git"},
		{p, "nice -n 5 go test ./..."}, {brood, "brood trust --list"}, {brood, "brood run --permission-mode plan 'look'"},
		{brood, "brood tasks list"}, {p, "echo x | tee"}, {p, "cp a b"}, {p, "uniq a"}, {p, "dd if=a"},
		{p, "cat ~/notes.txt"}, {p, "tee /dev/null < f"},
		{named, "go run ./cmd/x"}, {named, "git log --output=out.txt"}, {named, "sed -i s/a/b/ f"},
		{named, "timeout 60 go test -run X ./..."},
		{bare, "git log --output=/tmp/x"}, {bare, "find . -delete"},
	}
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]string{"command": tt.cmd})
		if d := tt.perms.Check("Bash", in, ws); d.Verdict != Allow {
			t.Errorf("%q: %v (%s)", tt.cmd, d.Verdict, d.Reason)
		}
	}
}

// FuzzOptionChecks: no command line makes the checks panic, and a line a
// rule for all of Bash covers stays covered.
func FuzzOptionChecks(f *testing.F) {
	for _, s := range []string{"git log --output=x", "sed -e 's/a/b/w x' -i f", "sed 'y/ab/", "sed '\\", "awk '{print > \"x\"}'",
		"tar -xzf a.tar -C d", "git -C", "git -c", "timeout 5 env -S x", "find . -exec", "sort -o", "curl -sSLo", "sed -i",
		"go test -exec=", "npm --script-shell", "git commit -m \"$(cat <<'EOF'\nx\nEOF\n)\"", "sed 's/a", "sed '1{\\'"} {
		f.Add(s)
	}
	p, err := NewPermissions("default", optionRules, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	bare, err := NewPermissions("default", []string{"Bash"}, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	ws := f.TempDir()
	f.Fuzz(func(t *testing.T, cmd string) {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		p.Check("Bash", in, ws)
		if d := bare.Check("Bash", in, ws); d.Verdict == Ask && d.Rule == "" && !strings.Contains(d.Reason, "configuration") && parseShell(cmd).unsafe == "" {
			t.Errorf("%q: a rule for all of Bash asks: %s", cmd, d.Reason)
		}
	})
}

// brood is a rule set that allows brood and claude by name.
func brood(t *testing.T) *Permissions {
	t.Helper()
	p, err := NewPermissions("default", []string{"Bash(brood:*)", "Bash(claude:*)", "Bash(env:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
