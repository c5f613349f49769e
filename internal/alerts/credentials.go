package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// TypeCompromisedCredential is a leaked credential (a dark-web record
// with a password or hash) of an account under an organization's domain.
const TypeCompromisedCredential = "compromised_credential"

// CredentialItem is a dark-web record with a password or hash whose email
// is under a domain: what the credential rule may see of it. It never
// holds the secret.
type CredentialItem struct {
	ID         string // the record's identity (deduplicates a record found under two assets)
	Email      string
	Breach     string
	BreachDate string
	Source     string
	DateAdded  int64 // when it was ingested, Unix seconds
}

// CredentialList returns the credential records under domains (each with
// its subdomains) ingested between from and to inclusive, newest first,
// a page at a time.
type CredentialList func(ctx context.Context, domains []string, from, to int64, limit, offset int) ([]CredentialItem, error)

// MaskEmail hides an email's local part but its first and last letters:
// "jane.doe@example.com" is "j***e@example.com".
func MaskEmail(email string) string {
	local, domain, ok := strings.Cut(email, "@")
	if !ok {
		return "***"
	}
	r := []rune(local)
	switch {
	case len(r) == 0:
		return "***@" + domain
	case len(r) <= 2:
		return string(r[0]) + "***@" + domain
	}
	return string(r[0]) + "***" + string(r[len(r)-1]) + "@" + domain
}

// credentialSamples is how many masked emails an alert shows.
const credentialSamples = 5

// CompromisedCredentials is the rule of the credential records of one
// breach (or, without a breach name, one source) newly found under the
// organization's domain asset a: one alert per (organization, breach),
// counting the affected accounts with a few masked emails as evidence.
// prev is the standing alert of the same breach (nil when none): its
// count of accounts and samples carry over, so a repeat grows them.
// maskedReason, when set, is why the evidence is all the organization may
// see of the records (darkweb.MaskedNotVerified: the domain is claimed,
// not verified); it goes in the evidence and the fingerprint.
func CompromisedCredentials(a periscope.Asset, breach, breachDate, source string, emails []string, prev *alertstore.Alert, ts int64, maskedReason string) (alertstore.Alert, bool) {
	if len(emails) == 0 {
		return alertstore.Alert{}, false
	}
	name := breach
	if name == "" {
		name = "an unnamed " + source + " dump"
	}
	seen := map[string]bool{}
	var masked []string
	total := 0
	if prev != nil {
		var ev struct {
			Accounts int      `json:"affected_accounts"`
			Samples  []string `json:"sample_emails"`
		}
		if json.Unmarshal(prev.Evidence, &ev) == nil {
			total = ev.Accounts
			for _, m := range ev.Samples {
				seen[m] = true
				masked = append(masked, m)
			}
		}
	}
	fresh := map[string]bool{}
	for _, e := range emails {
		fresh[strings.ToLower(e)] = true
	}
	total += len(fresh)
	keys := make([]string, 0, len(fresh))
	for e := range fresh {
		keys = append(keys, e)
	}
	slices.Sort(keys)
	for _, e := range keys {
		if m := MaskEmail(e); len(masked) < credentialSamples && !seen[m] {
			seen[m] = true
			masked = append(masked, m)
		}
	}
	al := newAlert(a, TypeCompromisedCredential, "high", "", a.Value, ts)
	al.Title = fmt.Sprintf("Credentials of %d account%s under %s found in %s", total, plural(total), a.Value, name)
	when := ""
	if breachDate != "" {
		when = " (breach date " + breachDate + ")"
	}
	al.Message = fmt.Sprintf("%d account%s under %s appear with a password or password hash in %s%s, source %s; %d newly ingested. Examples: %s. Reset these passwords and check for reuse.",
		total, plural(total), a.Value, name, when, source, len(fresh), strings.Join(masked, ", "))
	ev := map[string]any{"breach": breach, "breach_date": breachDate, "source": source, "asset": a.Value,
		"affected_accounts": total, "new_accounts": len(fresh), "sample_emails": masked}
	if maskedReason != "" {
		ev["masked_reason"] = maskedReason
	}
	al.Evidence = evidence(ev)
	key := breach
	if key == "" {
		key = "source:" + source
	}
	if maskedReason != "" {
		key += "\x00" + maskedReason
	}
	al.Fingerprint = fingerprint(a.OrganizationID, TypeCompromisedCredential, key)
	return al, true
}

// CredentialFeed alerts on credential records ingested after the
// baseline of the organization's domain asset (its creation plus
// baseline). verified lists the domain assets whose ownership is proven
// (nil: none); an alert of a domain only claimed says so
// (masked_reason domain_not_verified in its evidence) and shows no more
// than any alert does: a count and masked emails. Its position is the ingest time (Unix seconds) read up to;
// records younger than settle are left for the next step, so a batch
// still being committed is not skipped; the feed reads at most once per
// settle.
func CredentialFeed(st *alertstore.Store, assets func(ctx context.Context, kind string) ([]periscope.Asset, error),
	verified func(ctx context.Context) ([]periscope.Asset, error), list CredentialList,
	now func() time.Time, baseline, settle time.Duration) Feed {
	return Feed{Name: "alerts.credentials", Next: func(ctx context.Context, after int64, _ int) ([]alertstore.Alert, int64, error) {
		to := now().Add(-settle).Unix()
		if to <= after || after > 0 && to-after < int64(settle/time.Second) {
			return nil, after, nil
		}
		domains, err := assets(ctx, periscope.AssetDomain)
		if err != nil {
			return nil, after, err
		}
		proven := map[string]bool{} // organization + domain
		if verified != nil {
			vs, err := verified(ctx)
			if err != nil {
				return nil, after, err
			}
			for _, v := range vs {
				proven[v.OrganizationID+"\x00"+v.Value] = true
			}
		}
		type group struct {
			asset             periscope.Asset
			breach, date, src string
			reason            string
			emails            []string
		}
		groups := map[string]*group{}
		var order []string
		seen := map[string]bool{} // org + record id
		for _, a := range domains {
			from := max(after+1, a.CreatedAt.Unix()+int64(baseline/time.Second))
			if from > to {
				continue
			}
			reason := ""
			if !proven[a.OrganizationID+"\x00"+a.Value] {
				reason = darkweb.MaskedNotVerified
			}
			const page = 1000
			for off := 0; ; off += page {
				items, err := list(ctx, []string{a.Value}, from, to, page, off)
				if err != nil {
					return nil, after, err
				}
				for _, it := range items {
					if it.Email == "" || seen[a.OrganizationID+"\x00"+it.ID] {
						continue
					}
					seen[a.OrganizationID+"\x00"+it.ID] = true
					k := a.OrganizationID + "\x00" + reason + "\x00" + it.Breach // one alert per (organization, verified or not, breach)
					if it.Breach == "" {
						k += "\x00" + it.Source
					}
					g := groups[k]
					if g == nil {
						g = &group{asset: a, breach: it.Breach, date: it.BreachDate, src: it.Source, reason: reason}
						groups[k] = g
						order = append(order, k)
					}
					g.emails = append(g.emails, it.Email)
				}
				if len(items) < page {
					break
				}
			}
		}
		var out []alertstore.Alert
		for _, k := range order {
			g := groups[k]
			probe, _ := CompromisedCredentials(g.asset, g.breach, g.date, g.src, g.emails, nil, to, g.reason)
			var prev *alertstore.Alert
			if p, ok, err := st.AlertByFingerprint(ctx, g.asset.AccountID, probe.Fingerprint); err != nil {
				return nil, after, err
			} else if ok {
				prev = &p
			}
			if al, ok := CompromisedCredentials(g.asset, g.breach, g.date, g.src, g.emails, prev, to, g.reason); ok {
				out = append(out, al)
			}
		}
		return out, to, nil
	}}
}
