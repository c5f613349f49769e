// Package torstore keeps the Tor exit addresses the Tor Project publishes
// (package tor reads the lists): when each address was first and last seen
// exiting, and when each list was loaded.
package torstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/tor"
)

//go:embed migrations
var migrations embed.FS

// Migrations is the schema of the Tor exit list (version 31).
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "tor", FS: sub}
}

// Store is the Tor exit list on the core store's database.
type Store struct {
	s *store.Store
}

// New returns the Tor exit list of s.
func New(s *store.Store) *Store { return &Store{s: s} }

// Exit is a stored exit address.
type Exit struct {
	IP          string
	Fingerprint string
	FirstSeen   int64 // Unix seconds
	LastSeen    int64
}

// A first_seen only moves back and a last_seen only forward, whatever order
// the lists come in (CASE, not MIN/LEAST, which the engines spell apart).
const upsertExit = `INSERT INTO tor_exits (ip, fingerprint, first_seen, last_seen) VALUES (?, ?, ?, ?)
	ON CONFLICT (ip) DO UPDATE SET
	fingerprint = CASE WHEN excluded.fingerprint <> '' AND excluded.last_seen >= tor_exits.last_seen THEN excluded.fingerprint ELSE tor_exits.fingerprint END,
	first_seen = CASE WHEN excluded.first_seen < tor_exits.first_seen THEN excluded.first_seen ELSE tor_exits.first_seen END,
	last_seen = CASE WHEN excluded.last_seen > tor_exits.last_seen THEN excluded.last_seen ELSE tor_exits.last_seen END`

const upsertList = `INSERT INTO tor_lists (source, loaded_at, exits) VALUES (?, ?, ?)
	ON CONFLICT (source) DO UPDATE SET loaded_at = excluded.loaded_at, exits = excluded.exits`

// Load stores one list's exits in one transaction. An exit the list does
// not date (the bulk list) counts as seen at the load.
func (st *Store) Load(ctx context.Context, source string, exits []tor.Exit) error {
	now := st.s.Now().Unix()
	return st.s.Tx(ctx, func(tx *store.Tx) error {
		ins, err := tx.Prepared(ctx, upsertExit)
		if err != nil {
			return fmt.Errorf("load tor exits: %w", err)
		}
		for _, e := range exits {
			seen := now
			if !e.Seen.IsZero() {
				seen = e.Seen.Unix()
			}
			if _, err := ins.ExecContext(ctx, e.IP.String(), e.Fingerprint, seen, seen); err != nil {
				return fmt.Errorf("load tor exit %s: %w", e.IP, err)
			}
		}
		if _, err := tx.Exec(ctx, upsertList, source, now, len(exits)); err != nil {
			return fmt.Errorf("record tor list: %w", err)
		}
		return nil
	})
}

const selectExit = `SELECT ip, fingerprint, first_seen, last_seen FROM tor_exits WHERE ip = ?`

// Exit returns the stored exit at ip; not found when the lists never
// named it.
func (st *Store) Exit(ctx context.Context, ip netip.Addr) (Exit, error) {
	var e Exit
	err := st.s.DB().QueryRowContext(ctx, st.s.Rebind(selectExit), ip.Unmap().String()).Scan(&e.IP, &e.Fingerprint, &e.FirstSeen, &e.LastSeen)
	if errors.Is(err, sql.ErrNoRows) {
		return Exit{}, periscope.Errorf(periscope.ENotFound, "%s is not a known Tor exit.", ip)
	}
	if err != nil {
		return Exit{}, fmt.Errorf("look up tor exit %s: %w", ip, err)
	}
	return e, nil
}

// Loaded returns when a list was last loaded (zero when none ever was).
func (st *Store) Loaded(ctx context.Context) (time.Time, error) {
	var at sql.NullInt64
	if err := st.s.DB().QueryRowContext(ctx, `SELECT MAX(loaded_at) FROM tor_lists`).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("read tor list loads: %w", err)
	}
	if !at.Valid || at.Int64 == 0 {
		return time.Time{}, nil
	}
	return time.Unix(at.Int64, 0).UTC(), nil
}

// Count returns how many exit addresses are stored.
func (st *Store) Count(ctx context.Context) (int, error) {
	var n int
	if err := st.s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM tor_exits`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count tor exits: %w", err)
	}
	return n, nil
}
