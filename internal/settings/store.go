package settings

import (
	"fmt"
	"net/url"
	"path"
)

// checkStoreURL checks the shape of the store setting (blobstore opens it;
// settings only says early, naming the key, what is wrong with it).
func checkStoreURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" || !path.IsAbs(u.Path) {
			return fmt.Errorf("%q: a file store is file:///absolute/path (three slashes)", raw)
		}
	case "s3":
		if u.Host == "" {
			return fmt.Errorf("%q: an S3 store is s3://bucket/prefix?region=R", raw)
		}
	default:
		return fmt.Errorf("%q: use file:///shared/path or s3://bucket/prefix?region=R", raw)
	}
	return nil
}
