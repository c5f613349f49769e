package hostingest

import (
	"context"
	"fmt"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
)

// IngestHosts stores observations made in-process (the active monitor's)
// through the same path as a parsed file: names normalised, enrichment,
// one transaction, merge with what the index holds, the observer told. It
// returns how many hosts were inserted or updated.
func (in *Ingester) IngestHosts(ctx context.Context, source string, hs []host.Host) (int, error) {
	batch := make([]host.Host, 0, len(hs))
	for _, h := range hs {
		n, err := host.Normalize(h.Host)
		if err != nil {
			continue // the monitor asked about names from the index; a bad one is not stored
		}
		h.Host, h.Domain, h.TLD, h.Subdomain = n.Host, n.Domain, n.TLD, n.Subdomain
		if n.IP && h.IPAddress == "" {
			h.IPAddress = n.Host
		}
		Enrich(in.Enricher, &h)
		batch = append(batch, h)
	}
	if len(batch) == 0 {
		return 0, nil
	}
	b, err := in.Store.PrepareHosts(batch)
	if err != nil {
		return 0, fmt.Errorf("ingest %s: %w", source, err)
	}
	src, ok := in.Sources[source]
	if !ok {
		src = ledger.Source{Covers: []ledger.Category{}}
	}
	src.Name = source
	b.Source = src
	var sum Summary
	tx := &txBatches{in: in, source: source, sum: &sum, load: hoststore.NewHostLoad()}
	if err := tx.add(ctx, b); err != nil {
		tx.rollback()
		return 0, fmt.Errorf("ingest %s: %w", source, err)
	}
	if err := tx.commit(ctx); err != nil {
		return 0, fmt.Errorf("ingest %s: %w", source, err)
	}
	return sum.Inserted + sum.Updated, nil
}
