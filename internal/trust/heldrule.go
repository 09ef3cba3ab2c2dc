package trust

// HeldRule is an allow rule of a project settings file that the project
// gate holds back (the project is not trusted as it is), with the file's
// project-relative name: a call it would allow is still asked, and the
// refusal says which rule and `brood trust` (not "add a rule to the
// project's file", which cannot help there).
type HeldRule struct {
	Rule string `json:"rule"`
	File string `json:"file"`
}

// RuleFiles is a permission rule with the settings files that name it, as
// the user reads their names (~/.config/brood/settings.toml,
// .claude/settings.json): a refusal by an ask rule says where to remove it.
type RuleFiles struct {
	Rule  string   `json:"rule"`
	Files []string `json:"files"`
}
