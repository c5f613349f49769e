package scan

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// The page facts an HTML body gives, kept in a host's extracted artefacts
// under these kinds: what the site calls itself, how it describes itself,
// its logo and its social-network pages (the answers of FullHunt's Nexus
// domain collection).
const (
	ExtractSiteName    = "site_name"
	ExtractDescription = "meta_description"
	ExtractLogo        = "logo_url"
	ExtractSocial      = "social_urls"
)

// maxHTMLBytes bounds the part of a body read for page facts: the head,
// where they live, is near the start.
const maxHTMLBytes = 512 << 10

// socialHosts are the networks whose profile links are kept.
var socialHosts = []string{"twitter.com", "x.com", "linkedin.com", "facebook.com", "github.com", "instagram.com", "youtube.com", "mastodon.social"}

// pageFacts reads an HTML body's site name (og:site_name or
// application-name), description (description or og:description), logo
// (og:logo, og:image, then an apple-touch-icon or icon link) and links to
// social-network pages, resolved against base. Absent facts are omitted.
func pageFacts(body string, base *url.URL) map[string][]string {
	if len(body) > maxHTMLBytes {
		body = body[:maxHTMLBytes]
	}
	out := map[string][]string{}
	meta := map[string]string{}
	var icons []string
	z := html.NewTokenizer(strings.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr {
			continue
		}
		attrs := map[string]string{}
		for {
			k, v, more := z.TagAttr()
			attrs[strings.ToLower(string(k))] = strings.TrimSpace(string(v))
			if !more {
				break
			}
		}
		switch string(name) {
		case "meta":
			key := strings.ToLower(attrs["property"])
			if key == "" {
				key = strings.ToLower(attrs["name"])
			}
			if key != "" && attrs["content"] != "" {
				if _, ok := meta[key]; !ok {
					meta[key] = attrs["content"]
				}
			}
		case "link":
			rel := strings.ToLower(attrs["rel"])
			if strings.Contains(rel, "icon") && attrs["href"] != "" {
				if strings.Contains(rel, "apple-touch-icon") {
					icons = append([]string{attrs["href"]}, icons...)
				} else {
					icons = append(icons, attrs["href"])
				}
			}
		case "a":
			if u := resolve(base, attrs["href"]); u != "" && social(u) && !contains(out[ExtractSocial], u) && len(out[ExtractSocial]) < 20 {
				out[ExtractSocial] = append(out[ExtractSocial], u)
			}
		}
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := meta[k]; v != "" {
				return v
			}
		}
		return ""
	}
	if v := first("og:site_name", "application-name"); v != "" {
		out[ExtractSiteName] = []string{clipText(v, 200)}
	}
	if v := first("description", "og:description"); v != "" {
		out[ExtractDescription] = []string{clipText(v, 1000)}
	}
	logo := resolve(base, first("og:logo", "og:image"))
	for i := 0; logo == "" && i < len(icons); i++ {
		logo = resolve(base, icons[i])
	}
	if logo != "" {
		out[ExtractLogo] = []string{logo}
	}
	return out
}

// resolve makes an absolute http(s) URL of ref (empty when it is none).
func resolve(base *url.URL, ref string) string {
	if ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(u.String()) > 2048 {
		return ""
	}
	return u.String()
}

// social reports whether u is a page on a social network (not its home).
func social(u string) bool {
	p, err := url.Parse(u)
	if err != nil || strings.Trim(p.Path, "/") == "" {
		return false
	}
	h := strings.TrimPrefix(strings.ToLower(p.Hostname()), "www.")
	for _, s := range socialHosts {
		if h == s {
			return true
		}
	}
	return false
}

func contains(l []string, v string) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
