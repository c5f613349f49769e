// Package wire connects the capability stores to the API and to the alert
// rules: the one place that knows which package serves which group of
// routes and which store feeds which rule, shared by serve, the benchmarks
// and the tests.
package wire

import (
	"log/slog"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/domaincollection"
	"github.com/periscope-oss/periscope/internal/history"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/orgprofile"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/torstore"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// APIDeps wires the API to the storage of st: the core store serves
// accounts and organizations, hs (the host tables of st, with their posting
// cache) the host index, each capability's package its routes. Brand is a
// brand watcher without a worker (its searches are computed on demand);
// serve replaces it with the running one. Stored WHOIS records are shown
// beside domain listings whether or not WHOIS lookups are configured.
func APIDeps(st *store.Store, hs *hoststore.Store, log *slog.Logger) api.Deps {
	bs, as := brandstore.New(st), alertstore.New(st)
	return api.Deps{Accounts: st, Orgs: st, Hosts: hs, Vulns: vulnstore.New(st), Listings: bs,
		Brand: brandwatch.New(st, hs, bs, brandwatch.Options{}), Log: log,
		Alerts:       &alerts.Service{Store: as, DB: st},
		History:      &history.Service{Hosts: hs, Ledger: as},
		Tor:          torstore.New(st),
		Domains:      &domaincollection.Service{Hosts: hs},
		OrgProfiles:  OrgProfiles(st, hs, nil),
		WhoisRecords: whoislookup.Stored{Store: whoisstore.New(st)}}
}

// OrgProfiles is the organization profile service over st's host index and
// WHOIS records, counting dark-web records when dw is not nil.
func OrgProfiles(st *store.Store, hs *hoststore.Store, dw *darkwebstore.Store) *orgprofile.Service {
	p := &orgprofile.Service{Hosts: hs, Whois: whoisstore.New(st)}
	if dw != nil {
		p.Breaches = dw
	}
	return p
}
