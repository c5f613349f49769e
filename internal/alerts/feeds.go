package alerts

import (
	"context"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// Feed is a source of alerts other than the ledger (brand findings,
// certificate and domain expiry, vulnerability matches), read
// incrementally from a position the Worker keeps under the feed's Name.
type Feed struct {
	// Name is the checkpoint's name: unique, stable across releases.
	Name string
	// Next returns the alerts of the feed's items after position after
	// (at most about limit items) and the position of the last item
	// read; last == after means nothing new.
	Next func(ctx context.Context, after int64, limit int) (als []alertstore.Alert, last int64, err error)
	// Failed, when set, is called when a batch read by Next did not
	// commit (a feed that keeps state between batches resets it).
	Failed func()
}

// stepFeed runs one batch of a feed: its alerts, deliveries and new
// position commit together.
func (w *Worker) stepFeed(ctx context.Context, f Feed) (int, error) {
	now := w.DB.Now()
	pos, ok, err := w.Alerts.LeaseCheckpoint(ctx, f.Name, w.holder, now.Unix(), now.Add(w.Lease).Unix())
	if err != nil || !ok {
		return 0, err
	}
	als, last, err := f.Next(ctx, pos, w.Batch)
	if err != nil && f.Failed != nil {
		f.Failed()
	}
	if err != nil || last == pos {
		return 0, err
	}
	enqueued := 0
	err = w.DB.Tx(ctx, func(tx *store.Tx) error {
		enqueued = 0
		for i := range als {
			n, err := raise(ctx, w.Alerts, tx, &als[i], now)
			if err != nil {
				return err
			}
			enqueued += n
		}
		return w.Alerts.SaveCheckpoint(ctx, tx, f.Name, w.holder, last)
	})
	if err != nil && f.Failed != nil {
		f.Failed()
	}
	if err == nil && enqueued > 0 && w.Delivered != nil {
		w.Delivered()
	}
	return len(als), err
}

// BrandItem is a stored brand finding (brand_findings), by id.
type BrandItem struct {
	ID             int64
	OrganizationID string
	AccountID      string
	Kind           string // "typosquatting" or "potential_phishing"
	Domain         string
	BaseDomain     string
	Reason         string
	Score          int
	DateAdded      int64
}

// BrandFeed alerts on new brand findings. list returns findings with ids
// above after, in id order.
func BrandFeed(list func(ctx context.Context, after int64, limit int) ([]BrandItem, error)) Feed {
	return Feed{Name: "alerts.brand", Next: func(ctx context.Context, after int64, limit int) ([]alertstore.Alert, int64, error) {
		items, err := list(ctx, after, limit)
		if err != nil || len(items) == 0 {
			return nil, after, err
		}
		var out []alertstore.Alert
		for _, it := range items {
			a := periscope.Asset{OrganizationID: it.OrganizationID, AccountID: it.AccountID, Value: it.BaseDomain}
			if al, ok := BrandFinding(a, it.Kind, it.Domain, it.BaseDomain, it.Reason, it.Score, it.DateAdded); ok {
				out = append(out, al)
			}
		}
		return out, items[len(items)-1].ID, nil
	}}
}

// CertItem is a certificate served by a host of an organization's asset.
type CertItem struct {
	Asset    periscope.Asset
	Host     string
	Domain   string
	SHA256   string
	Subject  string
	NotAfter time.Time
}

// DomainItem is an organization's registrable domain with its registration
// expiry (from WHOIS or RDAP).
type DomainItem struct {
	Asset     periscope.Asset
	Domain    string
	Registrar string
	Expiry    time.Time
}

// ExpiryFeed checks certificates and domain registrations once a day (its
// position is the day, Unix seconds / 86400): each crossing of 30, 14, 7
// and 1 days, and expiry, is one alert. certs and domains list what to
// check (certificates expiring within 31 days is enough); either may be nil.
func ExpiryFeed(now func() time.Time, certs func(ctx context.Context) ([]CertItem, error), domains func(ctx context.Context) ([]DomainItem, error)) Feed {
	return Feed{Name: "alerts.expiry", Next: func(ctx context.Context, after int64, _ int) ([]alertstore.Alert, int64, error) {
		t := now()
		day := t.Unix() / 86400
		if day <= after {
			return nil, after, nil
		}
		var out []alertstore.Alert
		if certs != nil {
			cs, err := certs(ctx)
			if err != nil {
				return nil, after, err
			}
			for _, c := range cs {
				if al, ok := CertExpiring(c.Asset, c.Host, c.Domain, c.SHA256, c.Subject, c.NotAfter, t); ok {
					out = append(out, al)
				}
			}
		}
		if domains != nil {
			ds, err := domains(ctx)
			if err != nil {
				return nil, after, err
			}
			for _, d := range ds {
				if al, ok := DomainExpiring(d.Asset, d.Domain, d.Registrar, d.Expiry, t); ok {
					out = append(out, al)
				}
			}
		}
		return out, day, nil
	}}
}
