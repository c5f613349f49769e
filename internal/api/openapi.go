package api

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
)

// The OpenAPI document is kept as one JSON fragment per capability in
// openapi/, merged at start: core.json holds info, servers, security and the
// shared components; each other fragment adds paths and schemas. A test
// checks that the merged paths are exactly the registered routes and
// validates every response the test suite produces against it.
//
//go:embed openapi/*.json docs.html
var assets embed.FS

func buildOpenAPI() ([]byte, error) {
	load := func(name string) (map[string]any, error) {
		b, err := assets.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var frag map[string]any
		if err := json.Unmarshal(b, &frag); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return frag, nil
	}
	doc, err := load("openapi/core.json")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(assets, "openapi/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "openapi/core.json" {
			continue
		}
		frag, err := load(name)
		if err != nil {
			return nil, err
		}
		doc = mergeInto(doc, frag)
	}
	return json.MarshalIndent(doc, "", "  ")
}

// mergeInto adds src's paths and components to dst (objects merged one level
// below "paths" and below each "components" section).
func mergeInto(dst, src map[string]any) map[string]any {
	merge := func(key string) {
		s, _ := src[key].(map[string]any)
		if s == nil {
			return
		}
		d, _ := dst[key].(map[string]any)
		if d == nil {
			d = map[string]any{}
			dst[key] = d
		}
		for k, v := range s {
			if key == "components" {
				dm, _ := d[k].(map[string]any)
				if dm == nil {
					dm = map[string]any{}
					d[k] = dm
				}
				for kk, vv := range v.(map[string]any) {
					dm[kk] = vv
				}
				continue
			}
			if existing, ok := d[k].(map[string]any); ok {
				for m, op := range v.(map[string]any) {
					existing[m] = op
				}
				continue
			}
			d[k] = v
		}
	}
	merge("paths")
	merge("components")
	if tags, ok := src["tags"].([]any); ok {
		dt, _ := dst["tags"].([]any)
		dst["tags"] = append(dt, tags...)
	}
	return dst
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.openapi)
	return nil
}

// OpenAPI returns the merged document.
func (s *Server) OpenAPI() []byte { return s.openapi }

func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) error {
	b, err := assets.ReadFile("docs.html")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'")
	w.Write(b)
	return nil
}
