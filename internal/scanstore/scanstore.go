// Package scanstore holds active monitoring's tables: each organization's
// verification token, which of its assets may be probed (domains verified
// by DNS TXT or an operator, IP ranges authorised by an operator), the scans
// and their progress, the per-target request window that deduplicates
// on-demand scans, and the per-organization lock that keeps one scan of an
// organization running at a time across instances.
package scanstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/google/uuid"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations is the schema of active monitoring (version 13).
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "scans", FS: sub}
}

// Store is active monitoring's storage on the core store's database.
type Store struct {
	s *store.Store
}

// New returns the monitoring store on s.
func New(s *store.Store) *Store { return &Store{s: s} }

func (st *Store) now() int64 { return st.s.Now().Unix() }

// How an asset came to be authorised.
const (
	MethodDNS      = "dns-txt"
	MethodOperator = "operator"
)

// Scan origins.
const (
	OriginScheduled = "scheduled"
	OriginOnDemand  = "on_demand"
	OriginOEM       = "oem"
)

// Target types. A scheduled scan covers the whole organization.
const (
	TargetOrganization = "organization"
	TargetDomain       = "domain"
	TargetIPRange      = "ip_range"
	TargetHost         = "host"
)

// Scan statuses, in the order a scan passes them.
const (
	StatusQueued         = "queued"
	StatusDNSStarted     = "dns_started"
	StatusDNSCompleted   = "dns_completed"
	StatusPortsStarted   = "ports_started"
	StatusPortsCompleted = "ports_completed"
	StatusTLSStarted     = "tls_started"
	StatusTLSCompleted   = "tls_completed"
	StatusHTTPStarted    = "http_started"
	StatusHTTPCompleted  = "http_completed"
	StatusCompleted      = "scan_completed"
)

// Counts are what a scan did.
type Counts struct {
	Names          int // names resolved
	Addresses      int // addresses port-scanned
	OpenPorts      int // open (address, port) pairs
	HostsStored    int // observations handed to the host index
	SkippedPrivate int // names or addresses not probed: not public
}

// Scan is one scan of an organization's authorised assets.
type Scan struct {
	ID             string
	AccountID      string
	OrganizationID string
	Origin         string
	TargetType     string
	Target         string
	Status         string
	CreatedAt      int64
	StartedAt      int64
	CompletedAt    int64
	Counts         Counts
	Error          string
}

// Asset is an organization's asset (periscope.AssetDomain or
// periscope.AssetIPRange) with whether it may be probed.
type Asset struct {
	Kind       string
	Value      string
	Authorized bool
	Method     string
	// Continuous is false when the asset's settings turn continuous
	// (scheduled) scans off; on-demand scans still cover it.
	Continuous bool
}

// Org is an organization that has something to probe.
type Org struct {
	ID        string
	AccountID string
}

const (
	selectToken = `SELECT token FROM org_verification_tokens WHERE organization_id = ?`
	insertToken = `INSERT INTO org_verification_tokens (organization_id, token, created_at)
		VALUES (?, ?, ?) ON CONFLICT (organization_id) DO NOTHING`
)

// Token returns the organization's verification token, making it on first
// use. Two first uses at once agree on one token.
func (st *Store) Token(ctx context.Context, orgID string) (string, error) {
	var tok string
	err := st.s.Tx(ctx, func(tx *store.Tx) error {
		err := tx.QueryRow(ctx, selectToken, orgID).Scan(&tok)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		b := make([]byte, 16)
		rand.Read(b)
		if _, err := tx.Exec(ctx, insertToken, orgID, hex.EncodeToString(b), st.now()); err != nil {
			return err
		}
		return tx.QueryRow(ctx, selectToken, orgID).Scan(&tok)
	})
	if err != nil {
		return "", fmt.Errorf("verification token of %s: %w", orgID, err)
	}
	return tok, nil
}

const (
	selectAssetCreated  = `SELECT created_at FROM org_assets WHERE organization_id = ? AND kind = ? AND value = ?`
	upsertAuthorization = `INSERT INTO asset_authorizations (organization_id, kind, value, method, authorized_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id, kind, value)
		DO UPDATE SET method = excluded.method, authorized_at = excluded.authorized_at`
)

// Authorize records that the organization's asset may be probed. The asset
// must be one of the organization's (not found otherwise).
func (st *Store) Authorize(ctx context.Context, orgID, kind, value, method string) error {
	return st.s.Tx(ctx, func(tx *store.Tx) error {
		var created int64
		err := tx.QueryRow(ctx, selectAssetCreated, orgID, kind, value).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return periscope.Errorf(periscope.ENotFound, "%s is not an asset of organization %s.", periscope.Clip(value, 256), periscope.Clip(orgID, 64))
		}
		if err != nil {
			return fmt.Errorf("read asset %s: %w", value, err)
		}
		// Never before the asset's own row: a verification made in the
		// second the asset was added must count.
		if _, err := tx.Exec(ctx, upsertAuthorization, orgID, kind, value, method, max(st.now(), created)); err != nil {
			return fmt.Errorf("authorise %s: %w", value, err)
		}
		return nil
	})
}

const selectAssets = `SELECT a.kind, a.value, COALESCE(z.method, ''),
		CASE WHEN z.authorized_at IS NOT NULL AND z.authorized_at >= a.created_at THEN 1 ELSE 0 END,
		CASE WHEN EXISTS (SELECT 1 FROM asset_settings s WHERE s.organization_id = a.organization_id AND s.kind = a.kind
			AND s.value = a.value AND s.updated_at >= a.created_at AND s.continuous_scans = ?) THEN 0 ELSE 1 END
	FROM org_assets a LEFT JOIN asset_authorizations z
		ON z.organization_id = a.organization_id AND z.kind = a.kind AND z.value = a.value
	WHERE a.organization_id = ? ORDER BY a.kind, a.value`

// Assets lists the organization's assets with whether each may be probed.
func (st *Store) Assets(ctx context.Context, orgID string) ([]Asset, error) {
	rows, err := st.s.DB().QueryContext(ctx, st.s.Rebind(selectAssets), false, orgID)
	if err != nil {
		return nil, fmt.Errorf("list assets of %s: %w", orgID, err)
	}
	defer rows.Close()
	out := []Asset{}
	for rows.Next() {
		var a Asset
		var ok, continuous int
		if err := rows.Scan(&a.Kind, &a.Value, &a.Method, &ok, &continuous); err != nil {
			return nil, fmt.Errorf("list assets of %s: %w", orgID, err)
		}
		a.Authorized, a.Continuous = ok == 1, continuous == 1
		if !a.Authorized {
			a.Method = ""
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// DomainClaim is a domain of an account's organizations and whether its
// ownership is proven (verified by DNS TXT or by an operator).
type DomainClaim struct {
	Domain   string
	Verified bool
}

const selectDomainClaims = `SELECT a.value,
		CASE WHEN z.authorized_at IS NOT NULL AND z.authorized_at >= a.created_at THEN 1 ELSE 0 END
	FROM org_assets a LEFT JOIN asset_authorizations z
		ON z.organization_id = a.organization_id AND z.kind = a.kind AND z.value = a.value
	WHERE a.account_id = ? AND a.kind = ? ORDER BY a.value`

// DomainClaims lists the domains of all the account's organizations with
// whether each is verified, in one query.
func (st *Store) DomainClaims(ctx context.Context, accountID string) ([]DomainClaim, error) {
	rows, err := st.s.DB().QueryContext(ctx, st.s.Rebind(selectDomainClaims), accountID, periscope.AssetDomain)
	if err != nil {
		return nil, fmt.Errorf("list domain claims: %w", err)
	}
	defer rows.Close()
	var out []DomainClaim
	for rows.Next() {
		var c DomainClaim
		var ok int
		if err := rows.Scan(&c.Domain, &ok); err != nil {
			return nil, fmt.Errorf("list domain claims: %w", err)
		}
		c.Verified = ok == 1
		out = append(out, c)
	}
	return out, rows.Err()
}

const selectVerifiedDomains = `SELECT a.organization_id, a.account_id, a.value, a.created_at
	FROM org_assets a JOIN asset_authorizations z
		ON z.organization_id = a.organization_id AND z.kind = a.kind AND z.value = a.value
	WHERE a.kind = ? AND z.authorized_at >= a.created_at ORDER BY a.value, a.organization_id`

// VerifiedDomains lists every organization's verified domain assets.
func (st *Store) VerifiedDomains(ctx context.Context) ([]periscope.Asset, error) {
	rows, err := st.s.DB().QueryContext(ctx, st.s.Rebind(selectVerifiedDomains), periscope.AssetDomain)
	if err != nil {
		return nil, fmt.Errorf("list verified domains: %w", err)
	}
	defer rows.Close()
	var out []periscope.Asset
	for rows.Next() {
		a := periscope.Asset{Kind: periscope.AssetDomain}
		var created int64
		if err := rows.Scan(&a.OrganizationID, &a.AccountID, &a.Value, &created); err != nil {
			return nil, fmt.Errorf("list verified domains: %w", err)
		}
		a.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

const selectAuthorizedOrgs = `SELECT DISTINCT a.organization_id, a.account_id
	FROM org_assets a JOIN asset_authorizations z
		ON z.organization_id = a.organization_id AND z.kind = a.kind AND z.value = a.value
	WHERE z.authorized_at >= a.created_at ORDER BY a.organization_id`

// AuthorizedOrgs lists the organizations with at least one asset that may
// be probed.
func (st *Store) AuthorizedOrgs(ctx context.Context) ([]Org, error) {
	rows, err := st.s.DB().QueryContext(ctx, selectAuthorizedOrgs)
	if err != nil {
		return nil, fmt.Errorf("list monitored organizations: %w", err)
	}
	defer rows.Close()
	var out []Org
	for rows.Next() {
		var o Org
		if err := rows.Scan(&o.ID, &o.AccountID); err != nil {
			return nil, fmt.Errorf("list monitored organizations: %w", err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

const selectOrgAccount = `SELECT account_id FROM organizations WHERE id = ?`

// OrgAccount returns the account holding an organization (for operators'
// commands, which name organizations by id alone).
func (st *Store) OrgAccount(ctx context.Context, orgID string) (string, error) {
	var acct string
	err := st.s.DB().QueryRowContext(ctx, st.s.Rebind(selectOrgAccount), orgID).Scan(&acct)
	if errors.Is(err, sql.ErrNoRows) {
		return "", periscope.Errorf(periscope.ENotFound, "No organization %q.", periscope.Clip(orgID, 64))
	}
	if err != nil {
		return "", fmt.Errorf("read organization %s: %w", orgID, err)
	}
	return acct, nil
}

// Request is a scan asked for.
type Request struct {
	AccountID      string
	OrganizationID string
	Origin         string
	TargetType     string
	Target         string
	// Charge is the credit pool a new scan costs one credit of
	// (periscope.PoolNone: free, as scheduled scans are). The credit is
	// taken in the transaction that queues the scan: with the pool spent,
	// nothing is queued and the error is the pool's.
	Charge periscope.Pool
}

const (
	claimRequest = `INSERT INTO scan_requests (account_id, target_type, target, scan_id, requested_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (account_id, target_type, target)
		DO UPDATE SET scan_id = excluded.scan_id, requested_at = excluded.requested_at
		WHERE scan_requests.requested_at <= ?
		RETURNING scan_id`
	selectRequest = `SELECT scan_id FROM scan_requests WHERE account_id = ? AND target_type = ? AND target = ?`
	insertScan    = `INSERT INTO scans (id, account_id, organization_id, origin, target_type, target, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
)

// Enqueue queues a scan of the target unless the account asked for the
// same target less than window ago: then it returns that scan and
// deduplicated true. Concurrent requests for one target agree on one scan
// (the request row is the arbiter on both engines).
func (st *Store) Enqueue(ctx context.Context, r Request, window time.Duration) (sc Scan, deduplicated bool, err error) {
	now := st.now()
	id := uuid.NewString()
	err = st.s.Tx(ctx, func(tx *store.Tx) error {
		var got string
		err := tx.QueryRow(ctx, claimRequest, r.AccountID, r.TargetType, r.Target, id, now,
			now-int64(window/time.Second)).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) {
			deduplicated = true
			if err := tx.QueryRow(ctx, selectRequest, r.AccountID, r.TargetType, r.Target).Scan(&got); err != nil {
				return fmt.Errorf("read scan request: %w", err)
			}
			id = got
			return nil
		}
		if err != nil {
			return fmt.Errorf("record scan request: %w", err)
		}
		if _, err := tx.Reserve(ctx, r.AccountID, r.Charge, 1); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, insertScan, id, r.AccountID, r.OrganizationID, r.Origin, r.TargetType, r.Target, StatusQueued, now)
		return err
	})
	var pe *periscope.Error
	if errors.As(err, &pe) {
		return Scan{}, false, err
	}
	if err != nil {
		return Scan{}, false, fmt.Errorf("queue scan of %s: %w", r.Target, err)
	}
	sc, err = st.scan(ctx, `id = ?`, id)
	return sc, deduplicated, err
}

const scanColumns = `id, account_id, organization_id, origin, target_type, target, status, created_at,
	started_at, completed_at, names, addresses, open_ports, hosts_stored, skipped_private, error`

func scanScan(row interface{ Scan(...any) error }, sc *Scan) error {
	c := &sc.Counts
	return row.Scan(&sc.ID, &sc.AccountID, &sc.OrganizationID, &sc.Origin, &sc.TargetType, &sc.Target, &sc.Status,
		&sc.CreatedAt, &sc.StartedAt, &sc.CompletedAt, &c.Names, &c.Addresses, &c.OpenPorts, &c.HostsStored,
		&c.SkippedPrivate, &sc.Error)
}

func (st *Store) scan(ctx context.Context, where string, args ...any) (Scan, error) {
	var sc Scan
	err := scanScan(st.s.DB().QueryRowContext(ctx, st.s.Rebind(`SELECT `+scanColumns+` FROM scans WHERE `+where), args...), &sc)
	if errors.Is(err, sql.ErrNoRows) {
		return sc, periscope.Errorf(periscope.ENotFound, "No scan %q.", periscope.Clip(fmt.Sprint(args[0]), 64))
	}
	if err != nil {
		return sc, fmt.Errorf("read scan: %w", err)
	}
	return sc, nil
}

// Scan returns a scan of the account; another account's scan is not found,
// exactly like one that does not exist.
func (st *Store) Scan(ctx context.Context, accountID, id string) (Scan, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Scan{}, periscope.Errorf(periscope.ENotFound, "No scan %q.", periscope.Clip(id, 64))
	}
	return st.scan(ctx, `id = ? AND account_id = ?`, id, accountID)
}

const selectRunnable = `SELECT ` + scanColumns + ` FROM scans
	WHERE status = 'queued' OR (status <> 'scan_completed' AND started_at < ?)
	ORDER BY created_at, id LIMIT ?`

// Runnable lists scans waiting to run, oldest first: queued ones and ones
// started before staleBefore (Unix seconds) whose runner died.
func (st *Store) Runnable(ctx context.Context, staleBefore int64, limit int) ([]Scan, error) {
	rows, err := st.s.DB().QueryContext(ctx, st.s.Rebind(selectRunnable), staleBefore, limit)
	if err != nil {
		return nil, fmt.Errorf("list runnable scans: %w", err)
	}
	defer rows.Close()
	var out []Scan
	for rows.Next() {
		var sc Scan
		if err := scanScan(rows, &sc); err != nil {
			return nil, fmt.Errorf("list runnable scans: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

const (
	takeLock = `INSERT INTO scan_locks (organization_id, scan_id, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (organization_id) DO UPDATE SET scan_id = excluded.scan_id, expires_at = excluded.expires_at
		WHERE scan_locks.expires_at < ? OR scan_locks.scan_id = excluded.scan_id
		RETURNING scan_id`
	startScan = `UPDATE scans SET status = ?, started_at = ? WHERE id = ? AND status <> 'scan_completed'`
)

// Start takes the organization's scan lock for sc until now+lease and marks
// sc started. It reports false, changing nothing, when another scan of the
// organization holds an unexpired lock or sc already completed.
func (st *Store) Start(ctx context.Context, sc Scan, lease time.Duration) (bool, error) {
	now := st.now()
	started := false
	err := st.s.Tx(ctx, func(tx *store.Tx) error {
		var got string
		err := tx.QueryRow(ctx, takeLock, sc.OrganizationID, sc.ID, now+int64(lease/time.Second), now).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		res, err := tx.Exec(ctx, startScan, StatusDNSStarted, now, sc.ID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		started = n == 1
		if err == nil && !started {
			_, err = tx.Exec(ctx, deleteLock, sc.OrganizationID, sc.ID)
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("start scan %s: %w", sc.ID, err)
	}
	return started, nil
}

const (
	renewLock  = `UPDATE scan_locks SET expires_at = ? WHERE organization_id = ? AND scan_id = ?`
	setStatus  = `UPDATE scans SET status = ?, started_at = ?, names = ?, addresses = ?, open_ports = ?, hosts_stored = ?, skipped_private = ? WHERE id = ?`
	finishScan = `UPDATE scans SET status = 'scan_completed', completed_at = ?, names = ?, addresses = ?,
		open_ports = ?, hosts_stored = ?, skipped_private = ?, error = ? WHERE id = ?`
	deleteLock = `DELETE FROM scan_locks WHERE organization_id = ? AND scan_id = ?`
)

// Progress records sc's new status and counts and extends its lock to
// now+lease (started_at moves too, so a live scan never looks stale).
func (st *Store) Progress(ctx context.Context, sc Scan, status string, c Counts, lease time.Duration) error {
	now := st.now()
	err := st.s.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, renewLock, now+int64(lease/time.Second), sc.OrganizationID, sc.ID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, setStatus, status, now, c.Names, c.Addresses, c.OpenPorts, c.HostsStored, c.SkippedPrivate, sc.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("record progress of scan %s: %w", sc.ID, err)
	}
	return nil
}

// Finish marks sc completed with its counts and the error that ended it
// early (empty when none), and releases the organization's lock.
func (st *Store) Finish(ctx context.Context, sc Scan, c Counts, errText string) error {
	err := st.s.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, finishScan, st.now(), c.Names, c.Addresses, c.OpenPorts, c.HostsStored,
			c.SkippedPrivate, periscope.Clip(errText, 500), sc.ID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, deleteLock, sc.OrganizationID, sc.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish scan %s: %w", sc.ID, err)
	}
	return nil
}

// OrgAsset is an asset with the organization holding it.
type OrgAsset struct {
	OrganizationID string
	Asset
}

const selectAccountAssets = `SELECT a.organization_id, a.kind, a.value, COALESCE(z.method, ''),
		CASE WHEN z.authorized_at IS NOT NULL AND z.authorized_at >= a.created_at THEN 1 ELSE 0 END
	FROM org_assets a LEFT JOIN asset_authorizations z
		ON z.organization_id = a.organization_id AND z.kind = a.kind AND z.value = a.value
	WHERE a.account_id = ? ORDER BY a.organization_id, a.kind, a.value`

// AccountAssets lists every asset of the account's organizations with
// whether each may be probed.
func (st *Store) AccountAssets(ctx context.Context, accountID string) ([]OrgAsset, error) {
	rows, err := st.s.DB().QueryContext(ctx, st.s.Rebind(selectAccountAssets), accountID)
	if err != nil {
		return nil, fmt.Errorf("list assets of account %s: %w", accountID, err)
	}
	defer rows.Close()
	var out []OrgAsset
	for rows.Next() {
		var a OrgAsset
		var ok int
		if err := rows.Scan(&a.OrganizationID, &a.Kind, &a.Value, &a.Method, &ok); err != nil {
			return nil, fmt.Errorf("list assets of account %s: %w", accountID, err)
		}
		a.Authorized = ok == 1
		out = append(out, a)
	}
	return out, rows.Err()
}
