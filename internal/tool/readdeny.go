package tool

import "slices"

// ReadDenies are the specifiers of p's deny rules for Read, as written
// ("secrets/**", "~/.aws/**", ".env"), for a confinement that hides what
// they match from a child's commands (isolate.ReadDenied); all is true
// when a bare Read deny (every path) is among them.
func (p *Permissions) ReadDenies() (specs []string, all bool) {
	return p.denySpecs("Read")
}

// DeniesRead reports whether a deny rule forbids the Read tool to read
// the absolute, clean path p of a child working in workspace: the
// judgement Read itself makes.
func (p *Permissions) DeniesRead(path, workspace string) bool {
	return p.deniesRead(path, workspace)
}

// DeniesWrite reports whether a deny rule forbids Write or Edit of the
// absolute, clean path p for a child working in workspace (an isolated
// writer's landing refuses a patch that writes it).
func (p *Permissions) DeniesWrite(path, workspace string) bool {
	if p == nil {
		return false
	}
	c := call{tool: "Write", kind: subjectPath, subject: path, workspace: workspace}
	_, ok := firstMatch(p.deny, c, true)
	return ok
}

// EditDenies are the specifiers of p's deny rules for Edit, Write,
// MultiEdit and NotebookEdit; all is true when one of them is bare.
func (p *Permissions) EditDenies() (specs []string, all bool) {
	return p.denySpecs("Edit", "Write", "MultiEdit", "NotebookEdit")
}

// denySpecs are the specifiers of p's deny rules for any of tools; all is
// true when one of them is bare (every path).
func (p *Permissions) denySpecs(tools ...string) (specs []string, all bool) {
	if p == nil {
		return nil, false
	}
	for _, r := range p.deny {
		if !slices.Contains(tools, r.Tool) {
			continue
		}
		if r.Specifier == "" {
			all = true
			continue
		}
		specs = append(specs, r.Specifier)
	}
	return specs, all
}
