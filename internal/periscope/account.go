package periscope

import "time"

// Account is a customer (a company). Users and keys belong to it; credits,
// entitlements and limits are set on it.
type Account struct {
	ID                   string
	Company              string
	Plan                 string
	Enterprise           bool
	OEM                  bool
	CreditsPerMonth      int64
	CreditsUsed          int64
	OEMCreditsPerMonth   int64
	OEMCreditsUsed       int64
	CreditsPeriod        string // "YYYY-MM" of the period CreditsUsed counts in
	MaxResultsPerRequest int
	RateLimit            int // requests per minute per key; 0 means the deployment default
	Quotas               Quotas
	CreatedAt            time.Time
}

// Quotas bound what an account may keep that costs background work. A field
// of 0 means the default of DefaultQuotas.
type Quotas struct {
	Organizations int
	Domains       int // organization domains, over all the account's organizations
	Ranges        int // organization IP ranges, over all the account's organizations
}

// DefaultQuotas are the quotas of an account that sets none (docs/api.md "Organizations and assets").
var DefaultQuotas = Quotas{Organizations: 100, Domains: 250, Ranges: 250}

// Effective returns q with every unset field taken from DefaultQuotas.
func (q Quotas) Effective() Quotas {
	if q.Organizations <= 0 {
		q.Organizations = DefaultQuotas.Organizations
	}
	if q.Domains <= 0 {
		q.Domains = DefaultQuotas.Domains
	}
	if q.Ranges <= 0 {
		q.Ranges = DefaultQuotas.Ranges
	}
	return q
}

// Period returns the credit period ("YYYY-MM", UTC) that t falls in. Pools
// renew at 00:00 UTC on the first day of each month.
func Period(t time.Time) string { return t.UTC().Format("2006-01") }

// NextRenewal returns the start of the month after t, in UTC.
func NextRenewal(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

// Usage returns the credits used in the period of now: a stored count from an
// earlier period has been renewed.
func (a *Account) Usage(now time.Time) (used, oemUsed int64) {
	if a.CreditsPeriod != Period(now) {
		return 0, 0
	}
	return a.CreditsUsed, a.OEMCreditsUsed
}

// User is a person of an account. Keys belong to users.
type User struct {
	ID        string
	AccountID string
	Email     string
	FirstName string
	LastName  string
	CreatedAt time.Time
}

// APIKey is the stored record of a key: never the key itself, only its hash
// and a short public prefix that names it in logs and audit records.
type APIKey struct {
	ID        string
	AccountID string
	UserID    string
	Name      string
	Prefix    string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Principal is who a request acts for, resolved from its key.
type Principal struct {
	Account Account
	User    User
	Key     APIKey
}

// Pool names a credit pool.
type Pool int

// The credit pools.
const (
	PoolNone Pool = iota
	PoolMonthly
	PoolOEM
)

// Organization is an account-scoped monitoring organization.
type Organization struct {
	ID          string
	AccountID   string
	Name        string
	Description string
	IsDefault   bool
	CreatedAt   time.Time
}

// Asset kinds, as FullHunt names them on the wire.
const (
	AssetDomain  = "dns"
	AssetIPRange = "ip-range"
)

// Asset is a domain or an IP range of an organization.
type Asset struct {
	OrganizationID string
	AccountID      string
	Kind           string
	Value          string
	CreatedAt      time.Time
}

// AuditEntry is one request to an OEM route.
type AuditEntry struct {
	ID             int64
	AccountID      string
	KeyPrefix      string
	Time           time.Time
	Method         string
	Endpoint       string
	StatusCode     int
	CreditsCharged int
	QueryTags      []byte // JSON object
	Request        []byte // JSON body with secrets removed
	// SealedRequest, when set, is Request sealed with the secrets key for
	// the account (a request naming a person: dark-web searches); Request
	// is then {"sealed":true} at rest.
	SealedRequest string
}
