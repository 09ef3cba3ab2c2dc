package tool

import (
	"context"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/trust"
)

// TestSuggestNarrowestPrefix (review40 P2-G): a refusal's advice grants
// the narrowest thing in the narrowest place. A program's prefix with its
// subcommand or module goes in the user's file; a program of the
// repository's (./build.sh, bash ./x.sh, python3 tools/gen.py) in this
// project's local file; an interpreter, shell or wrapper with no narrower
// prefix (python3 -c, bash -c, env, xargs, sudo, find -exec), a program
// that runs code an argument or option names (make -f, zip -TT, npx, ssh,
// uv run python, java, go run, awk -f, git -c core.pager=, tar
// --to-command, sed's e: review42 P2-A), a bare file mover (mv, cp, rm,
// chmod) or all of Bash gets no rule to keep: approve it when asked, or
// --allow the exact line for one run.
func TestSuggestNarrowestPrefix(t *testing.T) {
	const user = " to [permissions] allow in ~/.config/brood/settings.toml, or pass --allow "
	const local = " to [permissions] allow in .brood/settings.local.toml (this project only: edited by hand, it needs brood trust), or pass --allow "
	const none = "no rule to keep is suggested (one for "
	const ask = " would allow far more than this call): approve the call when asked (run brood without -p)"
	for _, tc := range []struct{ cmd, want string }{
		{"git commit -m wip", `to allow it add "Bash(git commit:*)"` + user + `'Bash(git commit:*)'`},
		{"gh pr list", `to allow it add "Bash(gh pr:*)"` + user},
		// review-sweep P2-1: a build or test runner runs the repository's
		// own code (Makefile, package.json, build.rs, conftest.py): this
		// project's file, as ./build.sh.
		{"npm run test -- --watch=false", `to allow it add "Bash(npm run test:*)"` + local},
		{"uv run pytest -x", `to allow it add "Bash(uv run pytest:*)"` + local},
		{"npm install", `to allow it add "Bash(npm install:*)"` + local},
		{"npm install left-pad", `to allow it add "Bash(npm install:*)"` + local},
		{"npm test", `to allow it add "Bash(npm test:*)"` + local},
		{"yarn", `to allow it add "Bash(yarn:*)"` + local},
		{"make build", `to allow it add "Bash(make build:*)"` + local},
		{"make", `to allow it add "Bash(make:*)"` + local},
		{"cargo build --release", `to allow it add "Bash(cargo build:*)"` + local},
		{"cargo install ripgrep", `to allow it add "Bash(cargo install:*)"` + local},
		{"go test ./...", `to allow it add "Bash(go test:*)"` + local},
		{"go generate ./...", `to allow it add "Bash(go generate:*)"` + local},
		{"pytest -q", `to allow it add "Bash(pytest:*)"` + local},
		{"tox -e py312", `to allow it add "Bash(tox:*)"` + local},
		{"pip install requests", `to allow it add "Bash(pip install:*)"` + local},
		{"uv pip install requests", `to allow it add "Bash(uv pip:*)"` + local},
		{"cmake -B build -S .", `to allow it add "Bash(cmake:*)"` + local},
		{"bazel test //...", `to allow it add "Bash(bazel test:*)"` + local},
		// review-sweep P2-1: no rule for what runs code an argument names
		{"python3 -m pytest -q", none + `"python3"` + ask + `, or pass --allow 'Bash(python3 -m pytest -q)' for one run`},
		{"python3.12 -m pip install -e .", none + `"python3.12"` + ask},
		{"python3 -m runpy /tmp/x.py", none + `"python3"` + ask},
		{"python3 -m pdb /tmp/x.py", none + `"python3"` + ask},
		{"python3 -m cProfile /tmp/x.py", none + `"python3"` + ask},
		{"python3 ../../tmp/x.py", none + `"python3"` + ask},
		{"node ../other/x.js", none + `"node"` + ask},
		{"../../tmp/x.sh", none},
		{"docker run -v /:/h alpine", none + `"docker"` + ask},
		{"docker compose up", none + `"docker"` + ask},
		{"podman run alpine", none + `"podman"` + ask},
		{"kubectl run x --image=y", none + `"kubectl"` + ask},
		{"git difftool", none + `"git"` + ask},
		{"git mergetool", none + `"git"` + ask},
		{"rake test", none + `"rake"` + ask},
		{"cmake -P /tmp/x.cmake", none + `"cmake"` + ask},
		{"cmake -E env X=1 sh", none + `"cmake"` + ask},
		{"bazel run //:x", none + `"bazel"` + ask},
		{"nix-shell --run id", none + `"nix-shell"` + ask},
		{"rlwrap sh", none + `"rlwrap"` + ask},
		{"sg wheel id", none + `"sg"` + ask},
		{"runuser -u x id", none + `"runuser"` + ask},
		{"pkexec id", none + `"pkexec"` + ask},
		{"just build", none + `"just"` + ask},
		{"ansible-playbook site.yml", none + `"ansible-playbook"` + ask},
		{"terraform apply", none + `"terraform"` + ask},
		{"pytest -p /tmp/evil", none + `"pytest"` + ask},
		{"pytest -p evil tests", none + `"pytest"` + ask},
		{"rustc -C linker=/tmp/x a.rs", none + `"rustc"` + ask},
		{"./build.sh --fast", `to allow it add "Bash(./build.sh:*)"` + local + `'Bash(./build.sh:*)'`},
		{"scripts/ci/test.sh", `to allow it add "Bash(scripts/ci/test.sh:*)"` + local},
		{"bash ./x.sh", `to allow it add "Bash(bash ./x.sh:*)"` + local},
		{"sh build.sh all", `to allow it add "Bash(sh build.sh:*)"` + local},
		{"python3 manage.py migrate", `to allow it add "Bash(python3 manage.py:*)"` + local},
		{"python3 tools/gen.py --all", `to allow it add "Bash(python3 tools/gen.py:*)"` + local},
		{"node scripts/build.js --prod", `to allow it add "Bash(node scripts/build.js:*)"` + local},
		{"python3 -c 'print(1)'", none + `"python3"` + ask + `, or pass --allow 'Bash(python3 -c '\''print(1)'\'')' for one run`},
		{"python -c 'import os'", none + `"python"` + ask},
		{"node -e 'require(1)'", none + `"node"` + ask},
		{"ruby -e 'p 1'", none + `"ruby"` + ask},
		{"perl -e 'print 1'", none + `"perl"` + ask},
		{"bash -c 'echo hi'", none + `"bash"` + ask + `, or pass --allow 'Bash(bash -c '\''echo hi'\'')' for one run`},
		{"sh -c ls", none + `"sh"` + ask},
		{"zsh -c ls", none + `"zsh"` + ask},
		{"env FOO=1 make", none + `"env"` + ask + `, or pass --allow 'Bash(env FOO=1 make)' for one run`},
		{"xargs -n1 echo", none + `"xargs"` + ask},
		{"sudo make install", none + `"sudo"` + ask},
		{"nohup make build", none + `"nohup"` + ask},
		{"timeout 5 make build", none + `"timeout"` + ask},
		{"nice -n 5 make", none + `"nice"` + ask},
		{"eval make", none + `"eval"` + ask},
		{"find . -name x -exec rm {} ;", none + `"find"` + ask},
		{"mv cfg cfg2", none + `"mv"` + ask + `, or pass --allow 'Bash(mv cfg cfg2)' for one run`},
		{"cp a b", none + `"cp"` + ask},
		{"rm -rf build", none + `"rm"` + ask},
		{"chmod +x run", none + `"chmod"` + ask},
		{"echo $(cat x) | sh", none},
		// review42 P2-A: a program that runs code an argument or option
		// names gets no rule, as an interpreter does.
		{"make -f FILE", none + `"make"` + ask + `, or pass --allow 'Bash(make -f FILE)' for one run`},
		{"make -f x.mk build", none + `"make"` + ask},
		{"make -C /tmp/other", none + `"make"` + ask},
		{"make SHELL=/tmp/evil test", none + `"make"` + ask + `, or pass --allow 'Bash(make SHELL=/tmp/evil test)' for one run`},
		{"make test 'MAKEFLAGS=--eval=$(shell id)'", none + `"make"` + ask},
		{"make test .SHELLFLAGS=-xc", none + `"make"` + ask},
		{"zip -TT CMD a.zip x", none + `"zip"` + ask + `, or pass --allow 'Bash(zip -TT CMD a.zip x)' for one run`},
		{"zip --unzip-command 'sh -c id' a.zip x", none + `"zip"` + ask},
		{"npx PKG", none + `"npx"` + ask + `, or pass --allow 'Bash(npx PKG)' for one run`},
		{"npx cowsay hi", none + `"npx"` + ask},
		{"bunx cowsay", none + `"bunx"` + ask},
		{"uvx ruff check", none + `"uvx"` + ask},
		{"pipx run black .", none + `"pipx"` + ask},
		{"npm exec cowsay", none + `"npm"` + ask},
		{"pnpm dlx cowsay", none + `"pnpm"` + ask},
		{"ssh HOST CMD", none + `"ssh"` + ask + `, or pass --allow 'Bash(ssh HOST CMD)' for one run`},
		{"ssh host ls", none + `"ssh"` + ask},
		{"uv run python x.py", none + `"uv"` + ask},
		{"uv run python -c 'import os'", none + `"uv"` + ask},
		{"uv run -- sh -c id", none + `"uv"` + ask},
		{"poetry run python -m http.server", none + `"poetry"` + ask},
		{"java -jar x.jar", none + `"java"` + ask},
		{"java Foo", none + `"java"` + ask},
		{"go run ./x", none + `"go"` + ask + `, or pass --allow 'Bash(go run ./x)' for one run`},
		{"go run main.go", none + `"go"` + ask},
		{"go tool pprof x", none + `"go"` + ask},
		{"cargo run", none + `"cargo"` + ask},
		{"awk -f FILE", none + `"awk"` + ask + `, or pass --allow 'Bash(awk -f FILE)' for one run`},
		{"awk -f prog.awk in", none + `"awk"` + ask},
		{"gawk 'BEGIN{system(\"id\")}'", none + `"gawk"` + ask},
		{"ruby -e 'p 1'", none + `"ruby"` + ask},
		{"perl -e 'print 1'", none + `"perl"` + ask},
		{"perl /tmp/x.pl", none + `"perl"` + ask},
		{"python3 ~/x.py", none + `"python3"` + ask},
		{"node script", `to allow it add "Bash(node script:*)"` + local},
		{"perl x.pl", `to allow it add "Bash(perl x.pl:*)"` + local},
		{"deno run x.ts", none + `"deno"` + ask},
		{"deno eval 'Deno.exit()'", none + `"deno"` + ask},
		{"bun x.ts", none + `"bun"` + ask},
		{"bun run x.ts", none + `"bun"` + ask},
		{"php -r 'echo 1;'", none + `"php"` + ask},
		{"tclsh", none + `"tclsh"` + ask},
		{"R -e 1", none + `"R"` + ask},
		{"julia -e 1", none + `"julia"` + ask},
		{"gdb -batch -ex 'shell id'", none + `"gdb"` + ask},
		{"vim -c '!id' f", none + `"vim"` + ask},
		{"sqlite3 db '.shell id'", none + `"sqlite3"` + ask},
		{"busybox sh", none + `"busybox"` + ask},
		{"gcc -wrapper sh,-c,id x.c", none + `"gcc"` + ask},
		{"git -c core.pager=sh log", none + `"git"` + ask + `, or pass --allow 'Bash(git -c core.pager=sh log)' for one run`},
		{"find . -exec id ;", none + `"find"` + ask},
		{"tar --to-command=sh -xf a.tar", none + `"tar"` + ask},
		{"tar -I 'sh -c id' -xf a.tar", none + `"tar"` + ask},
		{"rsync -e 'sh -c x' a b", none + `"rsync"` + ask},
		{"sed -e '1e id' f", none + `"sed"` + ask},
		{"sort --compress-program=sh f", none + `"sort"` + ask},
		{"kubectl exec pod -- sh", none + `"kubectl"` + ask},
		{"docker exec ctr sh", none + `"docker"` + ask},
		{"mvn exec:java", none + `"mvn"` + ask},
		{"scp -S ./x a host:b", none + `"scp"` + ask},
		// What stays: a write the exact line shows, a plain program.
		{"sed -i s/a/b/ f", `to allow it add "Bash(sed -i s/a/b/ f)"` + user},
		{"poetry run pytest -x", `to allow it add "Bash(poetry run pytest:*)"` + local},
		{"cargo test", `to allow it add "Bash(cargo test:*)"` + local},
		{"zip -r out.zip src", `to allow it add "Bash(zip:*)"` + user},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			p, err := NewPermissions("default", nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			res := NewSet(Builtins()...).Run(context.Background(), &Env{Dir: t.TempDir(), Perms: p}, "Bash", bashIn(tc.cmd))
			if !res.IsError || !strings.Contains(res.Content, "; "+tc.want) || strings.Contains(res.Content, "\n") {
				t.Errorf("%s: refusal\n%s\nlacks\n%s", tc.cmd, res.Content, tc.want)
			}
			for _, broad := range []string{`"Bash"`, `"Bash(python3:*)"`, `"Bash(bash:*)"`, `"Bash(echo:*)"`, `"Bash(env:*)"`, `"Bash(mv:*)"`, `"Bash(rm:*)"`, `"Bash(find:*)"`,
				`"Bash(npx `, `"Bash(ssh:*)"`, `"Bash(uv run python:*)"`, `"Bash(java:*)"`, `"Bash(go run `, `"Bash(awk -f`} {
				if strings.Contains(res.Content, "add "+broad) {
					t.Errorf("%s: the refusal suggests the broad rule %s: %s", tc.cmd, broad, res.Content)
				}
			}
		})
	}
}

// TestHeldRuleAdvice: a call that an untrusted project's held-back allow
// rule would allow is still refused, and the refusal names the rule, its
// file and `brood trust` (adding it to the project's file cannot help); a
// call no held rule covers points at the user's settings file and --allow.
// Both keep one line.
func TestHeldRuleAdvice(t *testing.T) {
	base, err := NewPermissions("default", []string{"Bash(ls:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	perms := base.WithHeld([]trust.HeldRule{
		{Rule: "Bash(gh pr:*)", File: ".claude/settings.json"},
		{Rule: "Edit(src/**)", File: ".brood/settings.toml"},
	}, []string{"permissions.defaultMode bypassPermissions", "hooks"})
	set := NewSet(Builtins()...)
	for _, tc := range []struct {
		name, cmd string
		want      []string
		not       []string
	}{
		{"held rule allows it", "gh pr list",
			[]string{`; to allow it add "Bash(gh pr:*)" to [permissions] allow in ~/.config/brood/settings.toml, or pass --allow 'Bash(gh pr:*)'; the project's allow rule "Bash(gh pr:*)" in .claude/settings.json would allow it too but is held back until you trust the project, and brood trust (or --trust-project for one run) would also grant everything the project's files ask: permissions.defaultMode bypassPermissions, hooks`},
			[]string{"run brood trust", ".brood/settings.toml"}},
		{"held rule covers a part only", "gh pr list && curl example.com",
			[]string{`to allow it add "Bash(gh pr:*)" and "Bash(curl:*)" to [permissions] allow in ~/.config/brood/settings.toml, or pass --allow 'Bash(gh pr:*)' --allow 'Bash(curl:*)'`},
			[]string{"held back"}},
		{"no held rule", "git push origin main",
			[]string{`to allow it add "Bash(git push:*)" to [permissions] allow in ~/.config/brood/settings.toml, or pass --allow 'Bash(git push:*)'`},
			[]string{"held back", ".brood/settings.toml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := set.Run(context.Background(), &Env{Dir: t.TempDir(), Perms: perms}, "Bash", bashIn(tc.cmd))
			if !res.IsError || strings.Contains(res.Content, "\n") {
				t.Fatalf("not a one-line refusal: %q", res.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("refusal %q lacks %q", res.Content, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(res.Content, w) {
					t.Errorf("refusal %q says %q", res.Content, w)
				}
			}
		})
	}
	if d := base.Check("Bash", bashIn("python3 -m pytest"), t.TempDir()); len(d.Held) != 0 {
		t.Errorf("held rules without WithHeld: %v", d.Held)
	}
	if d := perms.Check("Bash", bashIn("python3 -m pytest"), t.TempDir()); d.Verdict != Ask {
		t.Errorf("a held-back rule allowed the call: %v", d.Verdict)
	}
}
