package orgprofile

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// How a suggested domain was found.
const (
	MethodCertificateOrg = "certificate_subject_organization"
	MethodRegistrantOrg  = "whois_registrant_organization"
	MethodRegistrantMail = "whois_registrant_email"
	MethodNameServerOrg  = "shared_name_servers_and_registrant"
)

// Suggestion is a domain that likely belongs to the same organization as
// one the account owns but is not one of its assets.
type Suggestion struct {
	Domain string
	Method string
	// Evidence says what matched: the owned domain, the shared value and
	// where the suggested domain showed it.
	OwnedDomain string
	Matched     string // the organization, e-mail or name server shared
	Host        string // the host whose certificate named it (certificate matches)
	Found       int64  // when the evidence was recorded (Unix seconds)
}

// Suggest returns the domains that share a certificate subject
// organization, a WHOIS registrant organization or e-mail, or name servers
// and a registrant organization with one of owned, none of owned among
// them, one suggestion per domain (the first method found wins: registrant
// e-mail, then organization, then certificates).
func (s *Service) Suggest(ctx context.Context, owned []string) ([]Suggestion, error) {
	var out []Suggestion
	add := func(sg Suggestion) {
		if sg.Domain == "" || slices.Contains(owned, sg.Domain) || slices.ContainsFunc(out, func(o Suggestion) bool { return o.Domain == sg.Domain }) {
			return
		}
		out = append(out, sg)
	}
	for _, d := range owned {
		rec, err := s.Whois.Get(ctx, d)
		if err != nil && !errors.Is(err, whoisstore.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			if err := s.byRegistrant(ctx, d, rec, add); err != nil {
				return nil, err
			}
		}
		if err := s.byCertificates(ctx, d, add); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Service) byRegistrant(ctx context.Context, owned string, rec whoisstore.Record, add func(Suggestion)) error {
	if e := strings.ToLower(strings.TrimSpace(rec.RegistrantEmail)); e != "" && usable(e) {
		recs, _, err := s.Whois.Search(ctx, whoisstore.Filter{Email: e, Limit: maxRecords})
		if err != nil {
			return err
		}
		for _, r := range recs {
			add(Suggestion{Domain: r.Domain, Method: MethodRegistrantMail, OwnedDomain: owned, Matched: e, Found: r.QueriedAt.Unix()})
		}
	}
	org := strings.TrimSpace(rec.RegistrantOrg)
	if !usable(org) {
		return nil
	}
	recs, _, err := s.Whois.Search(ctx, whoisstore.Filter{RegistrantOrg: org, Limit: maxRecords})
	if err != nil {
		return err
	}
	for _, r := range recs {
		// The filter is a prefix: only the same organization counts.
		if !strings.EqualFold(strings.TrimSpace(r.RegistrantOrg), org) {
			continue
		}
		m := MethodRegistrantOrg
		if shared := sharedNS(rec.NameServers, r.NameServers); shared != "" {
			m = MethodNameServerOrg
			add(Suggestion{Domain: r.Domain, Method: m, OwnedDomain: owned, Matched: org + "; " + shared, Found: r.QueriedAt.Unix()})
			continue
		}
		add(Suggestion{Domain: r.Domain, Method: m, OwnedDomain: owned, Matched: org, Found: r.QueriedAt.Unix()})
	}
	return nil
}

func (s *Service) byCertificates(ctx context.Context, owned string, add func(Suggestion)) error {
	page, err := s.Hosts.SearchHosts(ctx, hoststore.HostQuery{Under: owned, Limit: maxRecords})
	if err != nil {
		return err
	}
	var orgs []string
	for _, h := range page.Hosts {
		if o := strings.TrimSpace(h.Cert.SubjectOrg); usable(o) && !slices.Contains(orgs, o) {
			orgs = append(orgs, o)
		}
	}
	for _, o := range orgs {
		page, err := s.Hosts.SearchHosts(ctx, hoststore.HostQuery{Terms: []string{hoststore.Term(hoststore.TermCertSubjectOrg, o)}, Limit: maxRecords})
		if err != nil {
			return err
		}
		for _, h := range page.Hosts {
			add(Suggestion{Domain: h.Domain, Method: MethodCertificateOrg, OwnedDomain: owned, Matched: o, Host: h.Host, Found: h.FirstSeen})
		}
	}
	return nil
}

// sharedNS names a name server both lists hold ("" when none).
func sharedNS(a, b []string) string {
	for _, x := range a {
		x = strings.TrimSuffix(strings.ToLower(x), ".")
		if slices.ContainsFunc(b, func(y string) bool { return strings.TrimSuffix(strings.ToLower(y), ".") == x }) {
			return x
		}
	}
	return ""
}
