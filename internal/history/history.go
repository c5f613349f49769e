// Package history answers what a host looked like in the past and what
// changed: the change ledger (alertstore's rows) read back from the host as
// the index holds it now (ledger.AsOf). It serves the host history routes
// and FullHunt's historical-hosts search.
package history

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// Ledger is the change ledger the service reads (*alertstore.Store).
type Ledger interface {
	SearchLedger(ctx context.Context, q alertstore.LedgerQuery) ([]alertstore.Row, int, bool, error)
	LedgerHosts(ctx context.Context, domain string, limit int) ([]string, error)
}

// Hosts is the host index the service reads (*hoststore.Store).
type Hosts interface {
	Host(ctx context.Context, name string) (host.Host, error)
}

// MaxRows bounds the ledger rows read to rebuild one host: a host whose
// history since the time asked for is longer is refused rather than
// rebuilt from part of it.
const MaxRows = 50000

// Service reads host history.
type Service struct {
	Hosts  Hosts
	Ledger Ledger
}

// Query selects a page of a host's events.
type Query struct {
	From, To time.Time // inclusive; zero = open
	Limit    int
	Cursor   string // NextCursor of the previous page; "" = newest
}

// Page is a page of a host's events, newest first.
type Page struct {
	Host       string
	Events     []alertstore.Row
	NextCursor string // "" on the last page
}

// Events returns a page of the ledger of one indexed host, newest first.
func (s *Service) Events(ctx context.Context, name string, q Query) (Page, error) {
	h, err := s.Hosts.Host(ctx, name)
	if err != nil {
		return Page{}, err
	}
	lq := alertstore.LedgerQuery{Host: h.Host, From: unix(q.From), To: unix(q.To), Limit: q.Limit + 1, NoCount: true}
	if q.Cursor != "" {
		if lq.BeforeTS, lq.BeforeID, err = decodeCursor(q.Cursor); err != nil {
			return Page{}, err
		}
	}
	rows, _, _, err := s.Ledger.SearchLedger(ctx, lq)
	if err != nil {
		return Page{}, err
	}
	p := Page{Host: h.Host, Events: rows}
	if len(rows) > q.Limit {
		p.Events = rows[:q.Limit]
		last := p.Events[len(p.Events)-1]
		p.NextCursor = encodeCursor(last.Time, last.ID)
	}
	return p, nil
}

// AsOf returns the host as it stood at time at: the stored host with the
// ledger rows written after at undone. A host the index did not know yet
// at that time is not found.
func (s *Service) AsOf(ctx context.Context, name string, at time.Time) (host.Host, error) {
	h, err := s.Hosts.Host(ctx, name)
	if err != nil {
		return host.Host{}, err
	}
	newer, err := s.rows(ctx, h.Host, at.Unix()+1)
	if err != nil {
		return host.Host{}, err
	}
	past, ok := ledger.AsOf(h, ledgerChanges(newer))
	if !ok {
		return host.Host{}, notYet(h.Host, at)
	}
	if past.LastSeen > at.Unix() {
		// The last time the index knows it looked at the host by then:
		// its newest row up to at (rows are only written on a change).
		past.LastSeen, err = s.lastRowTime(ctx, h.Host, at.Unix())
		if err != nil {
			return host.Host{}, err
		}
	}
	return past, nil
}

// Diff is what changed in a host between two times.
type Diff struct {
	Host     string
	From, To time.Time
	// Changes are per set category the values gained and lost, per scalar
	// the value it moved from and to (ledger.Compare); a host unknown at
	// From has one host row.
	Changes []ledger.Change
}

// Diff compares the host as it stood at from with the host at to.
func (s *Service) Diff(ctx context.Context, name string, from, to time.Time) (Diff, error) {
	if to.Before(from) {
		return Diff{}, periscope.Errorf(periscope.EInvalid, "to must not be before from.")
	}
	h, err := s.Hosts.Host(ctx, name)
	if err != nil {
		return Diff{}, err
	}
	newer, err := s.rows(ctx, h.Host, from.Unix()+1)
	if err != nil {
		return Diff{}, err
	}
	cs := ledgerChanges(newer)
	split := 0 // cs[:split] were written after to
	for split < len(cs) && cs[split].Time > to.Unix() {
		split++
	}
	b, ok := ledger.AsOf(h, cs[:split])
	if !ok {
		return Diff{}, notYet(h.Host, to)
	}
	d := Diff{Host: h.Host, From: from, To: to}
	if a, ok := ledger.AsOf(h, cs); ok {
		d.Changes = ledger.Compare(&a, b)
	} else {
		d.Changes = ledger.Compare(nil, b)
	}
	return d, nil
}

// States returns the past states of a host (typ "host") or of every host of
// a registrable domain with ledger rows (typ "domain"), newest first, at
// most limit, and how many there are (up to MaxRows a host).
func (s *Service) States(ctx context.Context, typ, value string, limit int) ([]ledger.State, int, error) {
	names := []string{value}
	if typ == "domain" {
		var err error
		if names, err = s.Ledger.LedgerHosts(ctx, value, limit); err != nil {
			return nil, 0, err
		}
	}
	out, total := []ledger.State{}, 0
	for _, name := range names {
		h, err := s.Hosts.Host(ctx, name)
		if periscope.ErrorCode(err) == periscope.ENotFound {
			continue // no history: an empty answer, as for a domain
		}
		if err != nil {
			return nil, 0, err
		}
		rows, err := s.rows(ctx, h.Host, 0)
		if err != nil {
			return nil, 0, err
		}
		states := ledger.States(h, ledgerChanges(rows))
		total += len(states)
		for _, st := range states {
			if len(out) < limit {
				out = append(out, st)
			}
		}
	}
	return out, total, nil
}

// rows returns every ledger row of a host written at or after from,
// newest first.
func (s *Service) rows(ctx context.Context, name string, from int64) ([]alertstore.Row, error) {
	if from <= 0 {
		from = 1 // the ledger's From 0 means open
	}
	rows, _, _, err := s.Ledger.SearchLedger(ctx, alertstore.LedgerQuery{Host: name, From: from, Limit: MaxRows + 1, NoCount: true})
	if err != nil {
		return nil, err
	}
	if len(rows) > MaxRows {
		return nil, periscope.Errorf(periscope.EInvalid, "%s changed more than %d times since then; ask for a later time.", name, MaxRows)
	}
	return rows, nil
}

func (s *Service) lastRowTime(ctx context.Context, name string, at int64) (int64, error) {
	rows, _, _, err := s.Ledger.SearchLedger(ctx, alertstore.LedgerQuery{Host: name, To: at, Limit: 1, NoCount: true})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return rows[0].Time, nil
}

func ledgerChanges(rows []alertstore.Row) []ledger.Change {
	out := make([]ledger.Change, len(rows))
	for i, r := range rows {
		out[i] = r.Change
	}
	return out
}

func notYet(name string, at time.Time) error {
	return periscope.Errorf(periscope.ENotFound, "%s was not yet indexed at %s.", name, at.UTC().Format(time.RFC3339))
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// A cursor names the last row of a page: its time and id, opaque to
// clients.
func encodeCursor(ts, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ts, 10) + "." + strconv.FormatInt(id, 10)))
}

func decodeCursor(c string) (ts, id int64, err error) {
	bad := periscope.Errorf(periscope.EInvalid, "cursor is not one this server gave (use next_cursor as it came).")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, 0, bad
	}
	t, i, ok := strings.Cut(string(b), ".")
	if !ok {
		return 0, 0, bad
	}
	if ts, err = strconv.ParseInt(t, 10, 64); err != nil {
		return 0, 0, bad
	}
	if id, err = strconv.ParseInt(i, 10, 64); err != nil || id <= 0 {
		return 0, 0, bad
	}
	return ts, id, nil
}
