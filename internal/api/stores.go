package api

import (
	"context"
	"net/netip"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/enrich"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// The API's storage, one interface per handler group: the methods that
// group calls and nothing else, so a reader sees what a route can touch and
// a capability can be served by whatever implements its interface.
// cmd/periscope hands in the storage packages (store, hoststore, vulnstore,
// brandstore) and the running brand watcher.

// Accounts is what the route wrapper (route.go), the OEM audit routes
// (audit.go) and readiness (health.go) need: keys, credits, audit and the
// database's health. *store.Store implements it.
type Accounts interface {
	Authenticate(ctx context.Context, key string) (periscope.Principal, error)
	Reserve(ctx context.Context, accountID string, pool periscope.Pool, n int64) (period string, err error)
	Refund(ctx context.Context, accountID string, pool periscope.Pool, n int64, period string) error
	// Account reads an account, for the balance FullHunt's answers carry
	// after their charge (credits_body.go).
	Account(ctx context.Context, id string) (periscope.Account, error)
	AddAudit(ctx context.Context, e *periscope.AuditEntry) error
	AuditLogs(ctx context.Context, f store.AuditFilter) ([]periscope.AuditEntry, int, error)
	Ping(ctx context.Context) error
	// Engine names the database engine, for /readyz.
	Engine() string
}

// Orgs is what the organization routes (orgs.go) need. *store.Store
// implements it.
type Orgs interface {
	CreateOrganization(ctx context.Context, o *periscope.Organization) error
	Organizations(ctx context.Context, accountID string) ([]periscope.Organization, error)
	OrganizationsPage(ctx context.Context, accountID string, offset, limit int) ([]periscope.Organization, int, error)
	Organization(ctx context.Context, accountID, orgID string) (periscope.Organization, error)
	DeleteOrganization(ctx context.Context, accountID, orgID string) error
	Assets(ctx context.Context, accountID, orgID string) ([]periscope.Asset, error)
	AddAsset(ctx context.Context, a periscope.Asset) (created bool, err error)
	RemoveAsset(ctx context.Context, a periscope.Asset) error
	// Asset settings (asset_settings.go).
	AssetSettings(ctx context.Context, a periscope.Asset) (store.AssetSettings, error)
	SetAssetSettings(ctx context.Context, a periscope.Asset, set store.AssetSettings) error
	MoveAsset(ctx context.Context, a periscope.Asset, toOrgID string) error
}

// Hosts is what the domain, host and global search routes (hosts.go)
// need. *hoststore.Store implements it.
type Hosts interface {
	SearchHosts(ctx context.Context, q hoststore.HostQuery) (hoststore.HostPage, error)
	// MatchHosts evaluates a host query (hostsearch.go).
	MatchHosts(ctx context.Context, e *hoststore.Expr) (*hoststore.Matches, error)
	Listing(ctx context.Context, domain string, resolvableOnly bool, limit, countCap int) (hoststore.DomainListing, error)
	Host(ctx context.Context, name string) (host.Host, error)
	RecentUnder(ctx context.Context, domain string, resolvableOnly bool, limit, offset int) ([]host.Host, error)
	CertNamePrefix(ctx context.Context, prefix string, limit int) ([]host.Host, error)
}

// Vulns is what the vulnerability routes (vuln.go, vuln_metrics.go) need.
// *vulnstore.Store implements it.
type Vulns interface {
	FeedVulns(ctx context.Context, f vulnstore.VulnFilter) ([]vuln.Vulnerability, int, error)
	FeedExploits(ctx context.Context, f vulnstore.VulnFilter) ([]vuln.Exploit, int, error)
	FeedAdvisories(ctx context.Context, f vulnstore.VulnFilter) ([]vuln.Advisory, int, error)
	SearchVulns(ctx context.Context, q vulnstore.VulnSearch) ([]vuln.Vulnerability, error)
	SearchAdvisories(ctx context.Context, q vulnstore.VulnSearch) ([]vuln.Advisory, error)
	SearchExploits(ctx context.Context, q vulnstore.VulnSearch) ([]vuln.Exploit, error)
	CountVulns(ctx context.Context) (vulnstore.VulnCounts, error)
	VulnSyncStates(ctx context.Context) (map[string]vulnstore.SyncState, error)
	CVEScores(ctx context.Context, cveIDs []string) (map[string]vulnstore.CVEScore, error)
}

// AuditKey seals and opens the audit records of requests that name a
// person. *alertstore.SecretsKey implements it.
type AuditKey interface {
	Seal(purpose string, plain []byte) (string, error)
	Open(purpose, sealed string) ([]byte, error)
}

// BrandListings is what the brand listing routes (brand.go) read.
// *brandstore.Store implements it.
type BrandListings interface {
	Findings(ctx context.Context, q brandstore.ListQuery) ([]brandstore.Finding, int, error)
	OrgCertificates(ctx context.Context, q brandstore.ListQuery) ([]brandstore.OrgCertificate, int, error)
}

// BrandWatcher is the running brand watcher behind the OEM phishing and
// typosquatting searches (brand.go). *brandwatch.Watcher implements it.
type BrandWatcher interface {
	Search(ctx context.Context, account, base, kind string, limit int) ([]brandstore.Finding, error)
}

// IPEnricher describes an address from the enrichment tables the host
// ingest uses (provider ranges, MMDB files), for /nexus/ip-lookup.
// *enrich.Enricher implements it.
type IPEnricher interface {
	Enrich(ip netip.Addr, cnames []string) enrich.Result
}

// WhoisRecords is what domain details, subdomains and the OEM
// attack-surface search of a domain read of WHOIS (whois_data): the stored
// record of the name's registered domain, nil when none is stored. It
// never waits on a registry. whoislookup.Stored implements it.
type WhoisRecords interface {
	StoredWhois(ctx context.Context, name string) (*whoislookup.Data, error)
	// Search searches the stored records (the Nexus WHOIS search).
	Search(ctx context.Context, f whoisstore.Filter) ([]whoislookup.Data, int, error)
}
