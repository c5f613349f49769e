package enrich

import "strings"

// cnameSuffixes maps DNS name suffixes used by CDN and WAF edges to the
// service's name. A suffix matches whole labels only.
var cnameSuffixes = map[string]string{
	"cloudfront.net":           "cloudfront",
	"akamaiedge.net":           "akamai",
	"akamaiedge-staging.net":   "akamai",
	"edgekey.net":              "akamai",
	"edgesuite.net":            "akamai",
	"akamaihd.net":             "akamai",
	"akamaized.net":            "akamai",
	"akamai.net":               "akamai",
	"akamaitechnologies.com":   "akamai",
	"akadns.net":               "akamai",
	"fastly.net":               "fastly",
	"fastlylb.net":             "fastly",
	"cdn.cloudflare.net":       "cloudflare",
	"cloudflare.net":           "cloudflare",
	"azureedge.net":            "azure cdn",
	"azurefd.net":              "azure front door",
	"t-msedge.net":             "azure front door",
	"edgecastcdn.net":          "edgecast",
	"systemcdn.net":            "edgecast",
	"llnwd.net":                "limelight",
	"llnw.net":                 "limelight",
	"impervadns.net":           "incapsula",
	"incapdns.net":             "incapsula",
	"sucuri.net":               "sucuri",
	"cdn77.org":                "cdn77",
	"cdn77.net":                "cdn77",
	"b-cdn.net":                "bunnycdn",
	"gcdn.co":                  "gcore",
	"gcorelabs.net":            "gcore",
	"stackpathdns.com":         "stackpath",
	"stackpathcdn.com":         "stackpath",
	"kxcdn.com":                "keycdn",
	"cachefly.net":             "cachefly",
	"hwcdn.net":                "highwinds",
	"footprint.net":            "lumen",
	"cdngc.net":                "cdnetworks",
	"panthercdn.com":           "cdnetworks",
	"wscdns.com":               "wangsu",
	"wscloudcdn.com":           "wangsu",
	"chinacache.net":           "chinacache",
	"alikunlun.com":            "alibaba cloud cdn",
	"alikunlun.net":            "alibaba cloud cdn",
	"kunlunca.com":             "alibaba cloud cdn",
	"tdnsv5.com":               "tencent cloud cdn",
	"cdn.dnsv1.com":            "tencent cloud cdn",
	"qiniudns.com":             "qiniu",
	"arvancdn.ir":              "arvancloud",
	"arvancloud.ir":            "arvancloud",
	"qrator.net":               "qrator",
	"cdn.ampproject.org":       "google amp cdn",
	"netdna-cdn.com":           "stackpath",
	"edgecastdns.net":          "edgecast",
	"azioncdn.net":             "azion",
	"cdnsun.net":               "cdnsun",
	"cdnvideo.ru":              "cdnvideo",
	"ngenix.net":               "ngenix",
	"akamaized-staging.net":    "akamai",
	"edgekey-staging.net":      "akamai",
	"edgesuite-staging.net":    "akamai",
	"fastly-edge.com":          "fastly",
	"vo.msecnd.net":            "azure cdn",
	"cloudflare-ipfs.com":      "cloudflare",
	"edgecompute.app":          "fastly",
	"cloudfront-staging.net":   "cloudfront",
	"awsglobalaccelerator.com": "aws global accelerator",
}

// CDNForCNAME returns the CDN or WAF service whose edge name is a suffix of
// name (compared case-insensitively, whole labels only, trailing dot
// ignored), or "" when none matches. The longest matching suffix wins.
func CDNForCNAME(name string) string {
	name = strings.TrimSuffix(strings.TrimSpace(name), ".")
	if name == "" || len(name) > 253 {
		return ""
	}
	name = strings.ToLower(name)
	// Try the whole name, then drop one leading label at a time, so the
	// first hit is the longest suffix.
	for s := name; s != ""; {
		if cdn, ok := cnameSuffixes[s]; ok {
			return cdn
		}
		i := strings.IndexByte(s, '.')
		if i < 0 {
			break
		}
		s = s[i+1:]
	}
	return ""
}
