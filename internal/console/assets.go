package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// static holds the console's own CSS and JS and the vendored files
// (static/vendor/README.md names their versions and licences).
//
//go:embed static/console.css static/console.js static/vendor/*.js static/vendor/*.css
var static embed.FS

// asset is one file served under a content-hashed name, so that it can be
// cached for a year and a new build is fetched at once.
type asset struct {
	name        string // hashed name, e.g. htmx.min.3f2a9c1d.js
	body        []byte
	contentType string
}

type assetSet struct {
	byLogical map[string]*asset // "htmx.min.js" → asset
	byHashed  map[string]*asset
}

// AssetsPath is where assets are served.
const AssetsPath = "/assets/"

func loadAssets() (*assetSet, error) {
	set := &assetSet{byLogical: map[string]*asset{}, byHashed: map[string]*asset{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		logical := path.Base(p)
		sum := sha256.Sum256(body)
		ext := path.Ext(logical)
		a := &asset{name: strings.TrimSuffix(logical, ext) + "." + hex.EncodeToString(sum[:5]) + ext, body: body,
			contentType: mime.TypeByExtension(ext)}
		if a.contentType == "" {
			return fmt.Errorf("asset %s: unknown type", p)
		}
		set.byLogical[logical], set.byHashed[a.name] = a, a
		return nil
	})
	return set, err
}

// url is the hashed URL of a logical asset name; an unknown name is a
// template defect, caught when the templates are executed in the tests.
func (s *assetSet) url(logical string) (string, error) {
	a, ok := s.byLogical[logical]
	if !ok {
		return "", fmt.Errorf("no asset %q", logical)
	}
	return AssetsPath + a.name, nil
}

// total is the size of everything the console ships, in bytes.
func (s *assetSet) total() int {
	n := 0
	for _, a := range s.byLogical {
		n += len(a.body)
	}
	return n
}

// serveAsset answers GET /assets/{file}: a hashed name, cached for a year.
func (c *Console) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := c.assets.byHashed[r.PathValue("file")]
	if !ok {
		headers(w)
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(a.body)
}
