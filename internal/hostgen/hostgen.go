// Package hostgen generates a synthetic internet for benchmarks and demos:
// host objects with skewed (Zipf-like) distributions of domains, ports,
// products, technologies, organizations and countries, deterministic for a
// seed. The three largest domains have fixed names (see Domains) and hold
// 5%, 2% and 1% of the hosts, so "a domain with 50,000 hosts" exists at
// one million hosts.
package hostgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
)

// Domains are the fixed large domains and their share of the hosts.
var Domains = []struct {
	Name  string
	Share float64
}{{"megacorp.com", 0.05}, {"globex.com", 0.02}, {"initech.io", 0.01}}

// network is an operator: its AS, where it is, and what it hosts.
type network struct {
	asn      int
	org      string
	country  string
	cname    string
	city     string
	cloud    string
	regions  []string
	cdn      string
	prefix   string // a /8../16 the generated addresses come from
	weight   float64
	isHoster bool
}

var networks = []network{
	{16509, "Amazon.com, Inc.", "US", "United States", "Ashburn", "aws", []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1"}, "", "52.0.0.0/10", 22, true},
	{13335, "Cloudflare, Inc.", "US", "United States", "San Francisco", "", nil, "cloudflare", "104.16.0.0/13", 14, false},
	{15169, "Google LLC", "US", "United States", "Council Bluffs", "google", []string{"us-central1", "europe-west1", "asia-east1"}, "", "34.64.0.0/10", 9, true},
	{8075, "Microsoft Corporation", "US", "United States", "Boydton", "azure", []string{"eastus", "westeurope", "southeastasia"}, "", "20.32.0.0/11", 8, true},
	{24940, "Hetzner Online GmbH", "DE", "Germany", "Falkenstein", "", nil, "", "88.198.0.0/16", 6, true},
	{16276, "OVH SAS", "FR", "France", "Roubaix", "", nil, "", "51.68.0.0/14", 5, true},
	{14061, "DigitalOcean, LLC", "US", "United States", "Clifton", "digitalocean", []string{"nyc1", "ams3", "fra1", "sgp1"}, "", "159.65.0.0/16", 5, true},
	{20940, "Akamai International B.V.", "NL", "Netherlands", "Amsterdam", "", nil, "akamai", "23.32.0.0/11", 4, false},
	{54113, "Fastly, Inc.", "US", "United States", "San Francisco", "", nil, "fastly", "151.101.0.0/16", 3, false},
	{45102, "Alibaba (US) Technology Co., Ltd.", "CN", "China", "Hangzhou", "alibaba", []string{"cn-hangzhou", "cn-beijing"}, "", "47.88.0.0/14", 3, true},
	{63949, "Akamai Connected Cloud", "US", "United States", "Newark", "linode", []string{"us-east", "eu-central"}, "", "172.104.0.0/15", 2, true},
	{3320, "Deutsche Telekom AG", "DE", "Germany", "Berlin", "", nil, "", "80.128.0.0/11", 3, false},
	{3215, "Orange S.A.", "FR", "France", "Paris", "", nil, "", "90.0.0.0/9", 2, false},
	{7922, "Comcast Cable Communications, LLC", "US", "United States", "Philadelphia", "", nil, "", "73.0.0.0/8", 3, false},
	{4134, "Chinanet", "CN", "China", "Beijing", "", nil, "", "58.32.0.0/11", 3, false},
	{4766, "Korea Telecom", "KR", "South Korea", "Seoul", "", nil, "", "121.128.0.0/10", 2, false},
	{2516, "KDDI Corporation", "JP", "Japan", "Tokyo", "", nil, "", "106.128.0.0/11", 2, false},
	{12389, "Rostelecom", "RU", "Russia", "Moscow", "", nil, "", "95.24.0.0/13", 2, false},
	{1136, "KPN B.V.", "NL", "Netherlands", "Amsterdam", "", nil, "", "145.128.0.0/11", 1.5, false},
	{2856, "British Telecommunications PLC", "GB", "United Kingdom", "London", "", nil, "", "81.128.0.0/11", 2, false},
	{18881, "TELEFONICA BRASIL S.A", "BR", "Brazil", "Sao Paulo", "", nil, "", "177.0.0.0/11", 1.5, false},
	{9498, "Bharti Airtel Ltd.", "IN", "India", "Mumbai", "", nil, "", "122.160.0.0/12", 1.5, false},
}

// A service kind: its port, probability, and products.
type portSpec struct {
	port     int
	p        float64
	service  string
	products []string
}

var ports = []portSpec{
	{443, 0.82, "https", []string{"nginx", "Apache httpd", "cloudflare", "Microsoft IIS httpd", "LiteSpeed", "openresty", "Caddy"}},
	{80, 0.70, "http", []string{"nginx", "Apache httpd", "Microsoft IIS httpd", "cloudflare", "lighttpd"}},
	{22, 0.24, "ssh", []string{"OpenSSH", "Dropbear sshd"}},
	{8080, 0.08, "http-proxy", []string{"Jetty", "Apache Tomcat", "nginx", "Squid http proxy"}},
	{8443, 0.06, "https-alt", []string{"nginx", "Apache Tomcat"}},
	{21, 0.04, "ftp", []string{"vsftpd", "ProFTPD", "Pure-FTPd"}},
	{25, 0.05, "smtp", []string{"Postfix smtpd", "Exim smtpd", "Microsoft Exchange smtpd"}},
	{3306, 0.03, "mysql", []string{"MySQL", "MariaDB"}},
	{3389, 0.025, "ms-wbt-server", []string{"Microsoft Terminal Services"}},
	{5432, 0.015, "postgresql", []string{"PostgreSQL DB"}},
	{6379, 0.01, "redis", []string{"Redis key-value store"}},
	{9200, 0.008, "elasticsearch", []string{"Elasticsearch REST API"}},
	{53, 0.03, "domain", []string{"ISC BIND", "dnsmasq", "PowerDNS"}},
	{110, 0.02, "pop3", []string{"Dovecot pop3d"}},
	{993, 0.025, "imaps", []string{"Dovecot imapd"}},
	{27017, 0.005, "mongodb", []string{"MongoDB"}},
	{5900, 0.004, "vnc", []string{"RealVNC"}},
	{8888, 0.01, "http", []string{"Jupyter Notebook", "nginx"}},
}

var techs = []string{"jQuery", "WordPress", "PHP", "Bootstrap", "Google Analytics", "React", "Nginx", "Cloudflare",
	"Google Tag Manager", "Font Awesome", "Vue.js", "Apache", "MySQL", "Node.js", "Express", "Next.js", "Drupal",
	"Joomla", "Laravel", "Django", "Ruby on Rails", "ASP.NET", "Microsoft IIS", "HSTS", "Angular", "Shopify",
	"Magento", "Varnish", "Amazon S3", "Amazon CloudFront", "Jenkins", "GitLab", "Grafana", "Kibana", "Confluence", "Jira"}

var titles = []string{"Welcome", "Home", "Login", "Sign in", "Dashboard", "404 Not Found", "403 Forbidden",
	"Welcome to nginx!", "Apache2 Ubuntu Default Page: It works", "IIS Windows Server", "Just a moment...",
	"Grafana", "Jenkins", "GitLab", "Kibana", "Index of /", "Outlook Web App", "Citrix Gateway", "Portal",
	"Coming soon", "Admin", "API documentation", "Status", "Page not found"}

var labels = []string{"www", "api", "mail", "dev", "staging", "test", "vpn", "portal", "app", "admin", "cdn",
	"static", "assets", "img", "m", "shop", "blog", "docs", "support", "git", "ci", "jenkins", "grafana", "kibana",
	"auth", "sso", "login", "beta", "demo", "old", "new", "intranet", "remote", "owa", "autodiscover", "smtp",
	"imap", "pop", "ns1", "ns2", "mx", "ftp", "db", "redis", "monitor", "status", "s3", "files", "media", "video"}

var envs = []string{"prod", "stage", "dev", "qa", "uat", "eu", "us", "ap", "int", "ext"}

var words = []string{"acme", "north", "blue", "river", "stone", "cloud", "data", "net", "soft", "tech", "global",
	"prime", "alpha", "nova", "star", "green", "red", "metro", "city", "bank", "health", "media", "shop", "travel",
	"energy", "logi", "fin", "secure", "smart", "micro", "mega", "hyper", "quantum", "pixel", "urban", "peak"}

var tlds = []string{"com", "com", "com", "com", "net", "org", "io", "de", "fr", "co.uk", "nl", "ru", "cn", "jp", "br", "in", "com.au", "it", "es", "pl"}

var issuers = []struct{ cn, org string }{
	{"R11", "Let's Encrypt"}, {"R10", "Let's Encrypt"}, {"E6", "Let's Encrypt"},
	{"DigiCert Global G2 TLS RSA SHA256 2020 CA1", "DigiCert Inc"},
	{"Sectigo RSA Domain Validation Secure Server CA", "Sectigo Limited"},
	{"GTS CA 1P5", "Google Trust Services"}, {"WE1", "Google Trust Services"},
	{"Amazon RSA 2048 M02", "Amazon"}, {"GlobalSign GCC R6 AlphaSSL CA 2023", "GlobalSign nv-sa"},
}

// Generator produces hosts for one seed.
type Generator struct {
	r        *rand.Rand
	count    int
	now      int64
	netCum   []float64
	doms     []string
	domZipf  *rand.Zipf
	techZipf *rand.Zipf
	seen     map[string]bool
}

// New returns a generator of count hosts for seed; now is the reference
// time (last seen within the year before it).
func New(count int, seed uint64, now int64) *Generator {
	g := &Generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), count: count, now: now, seen: map[string]bool{}}
	total := 0.0
	for _, n := range networks {
		total += n.weight
		g.netCum = append(g.netCum, total)
	}
	// Other domains: about one per 8 hosts, sizes Zipf-distributed.
	nd := max(count/8, 10)
	for i := 0; i < nd; i++ {
		w1, w2 := words[g.r.IntN(len(words))], words[g.r.IntN(len(words))]
		g.doms = append(g.doms, fmt.Sprintf("%s%s%d.%s", w1, w2, i, tlds[g.r.IntN(len(tlds))]))
	}
	g.domZipf = rand.NewZipf(g.r, 1.1, 4, uint64(nd-1))
	g.techZipf = rand.NewZipf(g.r, 1.3, 2, uint64(len(techs)-1))
	return g
}

// All calls fn for each of the generator's hosts, in order.
func (g *Generator) All(fn func(host.Host) error) error {
	for i := 0; i < g.count; i++ {
		if err := fn(g.Host(i)); err != nil {
			return err
		}
	}
	return nil
}

func (g *Generator) domain(i int) string {
	// The fixed domains take their share of the indexes, spread evenly
	// (golden-ratio sequence).
	acc := 0.0
	for _, d := range Domains {
		if x := math.Mod(float64(i)*0.6180339887, 1); x >= acc && x < acc+d.Share {
			return d.Name
		}
		acc += d.Share
	}
	return g.doms[g.domZipf.Uint64()]
}

// Host returns the i-th host (calls must be in order for determinism).
func (g *Generator) Host(i int) host.Host {
	r := g.r
	dom := g.domain(i)
	var name string
	for tries := 0; ; tries++ {
		switch k := r.IntN(10); {
		case k < 4:
			name = labels[r.IntN(len(labels))]
		case k < 7:
			name = fmt.Sprintf("%s-%s", labels[r.IntN(len(labels))], envs[r.IntN(len(envs))])
		case k < 9:
			name = fmt.Sprintf("%s%d.%s", labels[r.IntN(len(labels))], r.IntN(100), envs[r.IntN(len(envs))])
		default:
			name = fmt.Sprintf("h%x", r.Uint32())
		}
		name += "." + dom
		if tries > 3 {
			name = fmt.Sprintf("n%d.%s", i, dom)
		}
		if !g.seen[name] {
			break
		}
	}
	g.seen[name] = true

	x := r.Float64() * g.netCum[len(g.netCum)-1]
	ni := 0
	for ni < len(networks)-1 && g.netCum[ni] < x {
		ni++
	}
	n := networks[ni]
	ip := randAddr(r, n.prefix)
	h := host.Host{
		Host: name, IPAddress: ip,
		DNS: host.DNS{A: []string{ip}},
		IPMetadata: host.IPMetadata{ASN: n.asn, Organization: n.org, ISP: n.org, CountryCode: n.country,
			CountryName: n.cname, CityName: n.city},
	}
	if n.cloud != "" {
		h.Cloud = host.Cloud{Provider: n.cloud, Region: n.regions[r.IntN(len(n.regions))]}
		h.Tags = append(h.Tags, "cloud")
	}
	if n.cdn != "" {
		h.CDN = n.cdn
		h.Tags = append(h.Tags, "cdn")
		h.DNS.CNAME = []string{fmt.Sprintf("%s.cdn.%s.net", strings.ReplaceAll(name, ".", "-"), n.cdn)}
	}
	if r.IntN(20) == 0 {
		h.DNS.AAAA = []string{fmt.Sprintf("2001:4860:%x::%x", r.IntN(0xffff), r.IntN(0xffff))}
	}
	last := g.now - int64(r.IntN(365*86400))
	first := last - int64(r.IntN(3*365*86400))
	h.FirstSeen, h.LastSeen = first, last
	web := false
	for _, p := range ports {
		if r.Float64() >= p.p {
			continue
		}
		prod := p.products[int(math.Min(float64(len(p.products)-1), r.ExpFloat64()))]
		if n.cdn == "cloudflare" && (p.port == 443 || p.port == 80) {
			prod = "cloudflare"
		}
		h.NetworkServices = append(h.NetworkServices, host.Service{Port: p.port, Protocol: "tcp", Service: p.service,
			Product: prod, Version: version(r, prod), FirstSeen: first, LastSeen: last})
		web = web || p.port == 443 || p.port == 80
	}
	if web {
		h.HTTPStatusCode = []int{200, 200, 200, 200, 301, 302, 403, 404, 401, 500}[r.IntN(10)]
		h.HTTPTitle = titles[r.IntN(len(titles))]
		for k := 1 + r.IntN(5); k > 0; k-- {
			h.Web = append(h.Web, techs[g.techZipf.Uint64()])
		}
		is := issuers[r.IntN(len(issuers))]
		h.Cert = host.Cert{SubjectCommonName: name, IssuerCommonName: is.cn, IssuerOrg: is.org,
			NotBefore: last - 60*86400, NotAfter: last + 30*86400, DNSNames: []string{name},
			SHA256Fingerprint: fmt.Sprintf("%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())}
		switch {
		case strings.Contains(h.HTTPTitle, "Login") || strings.Contains(h.HTTPTitle, "Sign in"):
			h.Tags = append(h.Tags, "login-page")
		case h.HTTPTitle == "Admin" || h.HTTPTitle == "Dashboard":
			h.Tags = append(h.Tags, "admin-panel")
		case h.HTTPTitle == "Index of /":
			h.Tags = append(h.Tags, "directory-listing")
		}
	}
	if r.IntN(12) == 0 {
		h.Tags = append(h.Tags, "self-signed")
	}
	return h
}

func version(r *rand.Rand, product string) string {
	switch product {
	case "nginx":
		return []string{"1.18.0", "1.24.0", "1.26.2", "1.27.3", ""}[r.IntN(5)]
	case "Apache httpd":
		return []string{"2.4.41", "2.4.52", "2.4.58", "2.4.62", ""}[r.IntN(5)]
	case "OpenSSH":
		return []string{"7.4", "8.2p1", "8.9p1", "9.2p1", "9.6p1"}[r.IntN(5)]
	}
	return ""
}

func randAddr(r *rand.Rand, prefix string) string {
	p := netip.MustParsePrefix(prefix)
	b := p.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	span := uint32(1) << (32 - p.Bits())
	v += 1 + r.Uint32N(span-2)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}
