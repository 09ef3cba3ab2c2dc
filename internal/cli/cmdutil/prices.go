package cmdutil

import (
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/settings"
)

// Prices is the price table: brood's list prices with the [prices] of the
// user's settings file applied, then the project's — only when the run
// reads that file (--setting-sources) and the user trusts it as it is now:
// a repository's prices decide --max-budget-usd and every cost shown
// (settings' trust gate names them on the trust line).
func (f *Factory) Prices() (price.Table, error) {
	user, project := settings.Sources{ProjectRoot: f.ProjectRoot, Home: f.Home, UserFile: f.Getenv(settings.EnvUserSettings)}.Paths()
	if project != "" && (!settings.Loads(f.SettingSources, true, project) || !f.TrustsProjectFile(project)) {
		project = ""
	}
	return price.Load(user, project)
}
