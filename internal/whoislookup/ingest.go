package whoislookup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/textenc"
	"github.com/periscope-oss/periscope/internal/whois"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// MaxIngest bounds one recorded answer (RDAP answers are larger than
// port-43 replies, which are capped at whois.MaxReply).
const MaxIngest = rdap.MaxBody

// Ingest stores one recorded answer, raw port-43 text or RDAP JSON, as the
// record of the domain it names, and returns that domain and whether a
// record of it was stored before. A record stored
// earlier from the other protocol keeps that protocol's part. cacheFor is
// how long the record answers lookups before upstream is asked again.
func Ingest(ctx context.Context, st *whoisstore.Store, data []byte, source string, now time.Time, cacheFor time.Duration) (domain string, existed bool, err error) {
	if len(data) > MaxIngest {
		return "", false, fmt.Errorf("%s: larger than %d bytes", source, MaxIngest)
	}
	// Legacy answers (Latin-1, Windows-1252) are decoded as every
	// ingested text is, rather than refused.
	data = textenc.Bytes(data)
	var rec whoisstore.Record
	var name string
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		obj, err := rdap.Decode(t)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", source, err)
		}
		if c := obj.ObjectClassName; c != "" && c != "domain" {
			return "", false, fmt.Errorf("%s: an RDAP %s answer, not a domain (ingest whois stores domain records)", source, c)
		}
		name = obj.LDHName
		if name == "" {
			name = obj.UnicodeName
		}
		rec = FromRDAPSummary(rdap.Summarize(source, obj, nil))
	} else {
		p := whois.Parse(string(data))
		name = p.Domain
		rec = FromWhois(string(data), "", source)
	}
	if name == "" {
		return "", false, fmt.Errorf("%s: the answer names no domain", source)
	}
	domain, tld, err := Normalize(name)
	if err != nil {
		return "", false, fmt.Errorf("%s: domain %q: %w", source, name, err)
	}
	old, err := st.Get(ctx, domain)
	switch {
	case err == nil:
		existed = true
		if rec.WhoisRaw == "" {
			rec.WhoisRaw, rec.WhoisServer = old.WhoisRaw, old.WhoisServer
		}
		if rec.RDAPJSON == "" {
			rec.RDAPJSON, rec.RDAPSource = old.RDAPJSON, old.RDAPSource
		}
	case !errors.Is(err, whoisstore.ErrNotFound):
		return "", false, err
	}
	rec.Domain, rec.TLD, rec.Source = domain, tld, "ingest"
	rec.QueriedAt = now.UTC().Truncate(time.Second)
	rec.CacheExpires = rec.QueriedAt.Add(cacheFor)
	if err := st.Put(ctx, rec); err != nil {
		return "", false, err
	}
	return domain, existed, nil
}
