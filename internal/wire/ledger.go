package wire

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// Ledger is the change ledger (alertstore) as the host store's tracker:
// every host write through a store built by Hosts records its changes in
// its own transaction, and wakes the alert rules once it commits.
type Ledger struct {
	Store *alertstore.Store
	wake  atomic.Pointer[func()]
}

// NewLedger returns the change ledger of st.
func NewLedger(st *store.Store) *Ledger { return &Ledger{Store: alertstore.New(st)} }

// Track implements hoststore.ChangeTracker.
func (l *Ledger) Track(ctx context.Context, tx *store.Tx, src ledger.Source, stored []string) (hoststore.BatchChanges, error) {
	t, err := l.Store.Track(ctx, tx, src, stored)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Committed implements hoststore.ChangeTracker: it calls the function set
// by OnCommit.
func (l *Ledger) Committed() {
	if f := l.wake.Load(); f != nil {
		(*f)()
	}
}

// OnCommit sets what is called after a host write committed ledger rows
// (the rules worker's Wake). Safe to call while writes run.
func (l *Ledger) OnCommit(f func()) { l.wake.Store(&f) }

// WHOIS records the changes of a domain's registration (registrar, expiry,
// name servers) when a WHOIS or RDAP record replaces a stored one: a
// whoisstore.ChangeFunc. A first lookup writes nothing (the host's own new
// row stands for it), nor does an answer that the domain is not
// registered.
func (l *Ledger) WHOIS(ctx context.Context, tx *store.Tx, old *whoisstore.Record, nw whoisstore.Record) error {
	if old == nil || old.NotFound || nw.NotFound {
		return nil
	}
	cs := ledger.DiffWHOIS(nw.Domain, nw.TLD,
		&ledger.WHOIS{Registrar: old.Registrar, Expiry: old.ExpiresAt, NameServers: old.NameServers},
		ledger.WHOIS{Registrar: nw.Registrar, Expiry: nw.ExpiresAt, NameServers: nw.NameServers},
		"whois", nw.QueriedAt.Unix())
	if len(cs) == 0 {
		return nil
	}
	return l.Store.RecordChanges(ctx, tx, cs)
}

// Hosts returns the host store of st with its writes recorded in l.
func Hosts(st *store.Store, l *Ledger) *hoststore.Store {
	return hoststore.NewTracked(st, l)
}

// DeferHostIndexes drops the indexes that a bulk load into an empty host
// index does not read (hoststore's and the ledger's
// BulkDeferredIndexes), for store.RestoreIndexes to build at its end, and
// returns their names; none when hosts are stored already.
func DeferHostIndexes(ctx context.Context, st *store.Store) ([]string, error) {
	empty, err := hoststore.New(st).Empty(ctx)
	if err != nil || !empty {
		return nil, err
	}
	return st.DeferIndexes(ctx, slices.Concat(hoststore.BulkDeferredIndexes, alertstore.BulkDeferredIndexes)...)
}
