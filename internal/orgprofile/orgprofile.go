// Package orgprofile builds organization profiles from what Periscope
// holds: the organizations named as registrants by stored WHOIS records,
// as subjects by the certificates hosts present, and as the owners of the
// networks (ASN organizations) hosts sit in; the domains and hosts under
// them; and how many dark-web records name those domains. Every field says
// which of these it came from. Nothing is looked up elsewhere: an
// organization none of them names has no profile.
package orgprofile

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// The sources a field may come from.
const (
	SourceWHOIS       = "whois_registrant"
	SourceCertificate = "certificate_subject"
	SourceASN         = "asn_organization"
	SourceHostIndex   = "host_index"
	SourceDarkweb     = "darkweb"
)

// Hosts is the host index (*hoststore.Store).
type Hosts interface {
	SearchHosts(ctx context.Context, q hoststore.HostQuery) (hoststore.HostPage, error)
}

// Whois is the stored WHOIS records (*whoisstore.Store).
type Whois interface {
	Search(ctx context.Context, f whoisstore.Filter) ([]whoisstore.Record, int, error)
	Get(ctx context.Context, domain string) (whoisstore.Record, error)
}

// Breaches counts dark-web records under domains (*darkwebstore.Store).
type Breaches interface {
	Credentials(ctx context.Context, q darkwebstore.ListQuery) ([]darkwebstore.Result, int, error)
}

// Service builds profiles. Breaches may be nil (no dark-web store).
type Service struct {
	Hosts    Hosts
	Whois    Whois
	Breaches Breaches
}

// Bounds of one search: the records read per source, the names a domain
// search follows, the domains counted per profile.
const (
	maxRecords       = 1000
	maxNamesOfDomain = 5
	maxDomainsCount  = 50
)

// Domain is a domain of an organization with where it was found.
type Domain struct {
	Domain        string
	Sources       []string
	Hosts         int // hosts the index holds under it
	BreachRecords int // dark-web records naming it
}

// ASN is a network of an organization.
type ASN struct {
	ASN          int
	Organization string
}

// Profile is one organization.
type Profile struct {
	Name          string   // the most common spelling
	OtherNames    []string // the other spellings
	Domains       []Domain // the primary first
	ASNs          []ASN
	Hosts         int // under its domains
	BreachRecords int // under its domains
	// Sources lists, per field (company_name, domain, other_domains,
	// other_names, asns, hosts, breach_records), where its values came
	// from.
	Sources map[string][]string
}

// Search returns the profiles of the organizations whose name is query
// (typ "organization": registrant names starting with it, certificate and
// ASN organizations equal to it, any case), or of those that hold the
// domain query (typ "domain": its registrant, its hosts' certificate
// subjects), at most limit.
func (s *Service) Search(ctx context.Context, typ, query string, limit int) ([]Profile, error) {
	names := []string{query}
	if typ == "domain" {
		var err error
		if names, err = s.namesOf(ctx, query); err != nil {
			return nil, err
		}
	}
	b := builder{orgs: map[string]*org{}}
	for _, name := range names {
		if err := s.collect(ctx, &b, name); err != nil {
			return nil, err
		}
	}
	out := make([]Profile, 0, len(b.orgs))
	for _, o := range b.orgs {
		out = append(out, o.profile())
	}
	slices.SortFunc(out, func(a, b Profile) int {
		return cmp.Or(cmp.Compare(len(b.Domains), len(a.Domains)), cmp.Compare(b.Hosts, a.Hosts), strings.Compare(a.Name, b.Name))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		if err := s.count(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// namesOf returns the organizations a domain names: its registrant and the
// subjects of its hosts' certificates.
func (s *Service) namesOf(ctx context.Context, domain string) ([]string, error) {
	var names []string
	add := func(n string) {
		n = strings.TrimSpace(n)
		if usable(n) && !slices.ContainsFunc(names, func(o string) bool { return strings.EqualFold(o, n) }) && len(names) < maxNamesOfDomain {
			names = append(names, n)
		}
	}
	rec, err := s.Whois.Get(ctx, domain)
	switch {
	case err == nil:
		add(rec.RegistrantOrg)
	case !errors.Is(err, whoisstore.ErrNotFound):
		return nil, err
	}
	page, err := s.Hosts.SearchHosts(ctx, hoststore.HostQuery{Under: domain, Limit: maxRecords})
	if err != nil {
		return nil, err
	}
	for _, h := range page.Hosts {
		add(h.Cert.SubjectOrg)
	}
	return names, nil
}

// collect adds what each source says of the organization name.
func (s *Service) collect(ctx context.Context, b *builder, name string) error {
	recs, _, err := s.Whois.Search(ctx, whoisstore.Filter{RegistrantOrg: name, Limit: maxRecords})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if usable(r.RegistrantOrg) {
			b.of(r.RegistrantOrg, SourceWHOIS).domain(r.Domain, SourceWHOIS)
		}
	}
	for _, f := range []struct {
		term, source string
		org          func(h host.Host) string
	}{
		{hoststore.TermCertSubjectOrg, SourceCertificate, func(h host.Host) string { return h.Cert.SubjectOrg }},
		{hoststore.TermOrg, SourceASN, func(h host.Host) string { return h.IPMetadata.Organization }},
	} {
		page, err := s.Hosts.SearchHosts(ctx, hoststore.HostQuery{Terms: []string{hoststore.Term(f.term, name)}, Limit: maxRecords})
		if err != nil {
			return err
		}
		for _, h := range page.Hosts {
			o := b.of(f.org(h), f.source)
			if f.source == SourceASN {
				o.asn(h.IPMetadata.ASN, h.IPMetadata.Organization)
				continue
			}
			if h.Domain != "" {
				o.domain(h.Domain, f.source)
			}
		}
	}
	return nil
}

// count fills in the hosts and dark-web records under a profile's domains.
func (s *Service) count(ctx context.Context, p *Profile) error {
	for i := range p.Domains {
		if i >= maxDomainsCount {
			break
		}
		d := &p.Domains[i]
		page, err := s.Hosts.SearchHosts(ctx, hoststore.HostQuery{Under: d.Domain, Limit: 1})
		if err != nil {
			return err
		}
		d.Hosts = page.Total
		p.Hosts += d.Hosts
		if s.Breaches != nil {
			_, n, err := s.Breaches.Credentials(ctx, darkwebstore.ListQuery{Domains: []string{d.Domain}, Limit: 1})
			if err != nil {
				return err
			}
			d.BreachRecords = n
			p.BreachRecords += n
		}
	}
	if p.Hosts > 0 {
		p.Sources["hosts"] = []string{SourceHostIndex}
	}
	if s.Breaches != nil {
		p.Sources["breach_records"] = []string{SourceDarkweb}
	}
	return nil
}

// usable reports whether a name names an organization rather than hiding
// one (registries' privacy placeholders).
func usable(n string) bool {
	l := strings.ToLower(strings.TrimSpace(n))
	if l == "" {
		return false
	}
	for _, hidden := range []string{"redacted", "privacy", "not disclosed", "data protected", "withheld", "gdpr masked"} {
		if strings.Contains(l, hidden) {
			return false
		}
	}
	return true
}

// builder groups what the sources say by organization (its name, any
// case).
type builder struct {
	orgs map[string]*org
}

type org struct {
	spellings map[string]int      // spelling → times seen
	sources   map[string]bool     // where the name was seen
	domains   map[string][]string // domain → sources
	order     []string            // domains in the order found
	asns      []ASN
}

func (b *builder) of(name, source string) *org {
	name = strings.Join(strings.Fields(name), " ")
	k := strings.ToLower(name)
	o := b.orgs[k]
	if o == nil {
		o = &org{spellings: map[string]int{}, sources: map[string]bool{}, domains: map[string][]string{}}
		b.orgs[k] = o
	}
	o.spellings[name]++
	o.sources[source] = true
	return o
}

func (o *org) domain(d, source string) {
	if _, ok := o.domains[d]; !ok {
		o.order = append(o.order, d)
	}
	if !slices.Contains(o.domains[d], source) {
		o.domains[d] = append(o.domains[d], source)
	}
}

func (o *org) asn(n int, name string) {
	if n > 0 && !slices.ContainsFunc(o.asns, func(a ASN) bool { return a.ASN == n }) {
		o.asns = append(o.asns, ASN{ASN: n, Organization: name})
	}
}

func (o *org) profile() Profile {
	p := Profile{OtherNames: []string{}, Domains: []Domain{}, ASNs: o.asns, Sources: map[string][]string{}}
	if p.ASNs == nil {
		p.ASNs = []ASN{}
	}
	best := 0
	for name, n := range o.spellings {
		if n > best || n == best && name < p.Name {
			p.Name, best = name, n
		}
	}
	for name := range o.spellings {
		if name != p.Name {
			p.OtherNames = append(p.OtherNames, name)
		}
	}
	slices.Sort(p.OtherNames)
	for s := range o.sources {
		p.Sources["company_name"] = append(p.Sources["company_name"], s)
	}
	slices.Sort(p.Sources["company_name"])
	if len(p.OtherNames) > 0 {
		p.Sources["other_names"] = p.Sources["company_name"]
	}
	// The primary domain: the one most sources name, then the first found.
	order := slices.Clone(o.order)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(len(o.domains[b]), len(o.domains[a])) })
	for i, d := range order {
		srcs := slices.Sorted(slices.Values(o.domains[d]))
		p.Domains = append(p.Domains, Domain{Domain: d, Sources: srcs})
		key := "other_domains"
		if i == 0 {
			key = "domain"
		}
		for _, s := range srcs {
			if !slices.Contains(p.Sources[key], s) {
				p.Sources[key] = append(p.Sources[key], s)
			}
		}
		slices.Sort(p.Sources[key])
	}
	if len(p.ASNs) > 0 {
		p.Sources["asns"] = []string{SourceASN}
	}
	return p
}
