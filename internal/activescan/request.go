package activescan

import (
	"context"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/probe"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// Target is a parsed on-demand scan target.
type Target struct {
	Type  string // scanstore.TargetDomain, TargetIPRange or TargetHost
	Value string // canonical: lower-case name, canonical address or masked CIDR
	name  string
	addr  netip.Addr
	pref  netip.Prefix
}

// ParseTarget reads an on-demand target. typ is "domain", "ip_range" or
// "host", or "" to infer it (the enterprise route's target=: a CIDR is a
// range, an address a host, anything else a domain). Non-public addresses
// are refused unless allowPrivate.
func ParseTarget(typ, s string, allowPrivate bool) (Target, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Target{}, periscope.Errorf(periscope.EMissing, "target is required.")
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || len(s) > 253 {
		return Target{}, periscope.Errorf(periscope.EInvalid, "target must be a domain, IP address or CIDR of at most 253 characters.")
	}
	if typ == "" {
		switch {
		case strings.Contains(s, "/"):
			typ = scanstore.TargetIPRange
		default:
			if _, err := netip.ParseAddr(s); err == nil {
				typ = scanstore.TargetHost
			} else {
				typ = scanstore.TargetDomain
			}
		}
	}
	public := func(p netip.Prefix) error {
		if !allowPrivate && !probe.PublicPrefix(p) {
			return periscope.Errorf(periscope.EInvalid, "%s is not public address space; only public targets are scanned.", p)
		}
		return nil
	}
	t := Target{Type: typ}
	switch typ {
	case scanstore.TargetDomain:
		d, err := asset.Domain(s)
		if err != nil {
			return t, err
		}
		t.Value, t.name = d, d
	case scanstore.TargetIPRange:
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return t, periscope.Errorf(periscope.EInvalid, "%q is not a CIDR.", periscope.Clip(s, 64))
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Zone() != "" || p.Addr().Is4In6() {
			return t, periscope.Errorf(periscope.EInvalid, "%q is not a plain CIDR.", periscope.Clip(s, 64))
		}
		p = p.Masked()
		if err := public(p); err != nil {
			return t, err
		}
		t.Value, t.pref = p.String(), p
	case scanstore.TargetHost:
		if a, err := netip.ParseAddr(s); err == nil {
			if a.Zone() != "" || a.Is4In6() {
				return t, periscope.Errorf(periscope.EInvalid, "%q is not a plain IP address.", periscope.Clip(s, 64))
			}
			if err := public(netip.PrefixFrom(a, a.BitLen())); err != nil {
				return t, err
			}
			t.Value, t.addr = a.String(), a
			break
		}
		n, err := host.Normalize(s)
		if err != nil || n.IP {
			return t, periscope.Errorf(periscope.EInvalid, "%q is not a host name or IP address.", periscope.Clip(s, 64))
		}
		t.Value, t.name = n.Host, n.Host
	default:
		return t, periscope.Errorf(periscope.EInvalid, "type must be domain, ip_range or host.")
	}
	return t, nil
}

// owner finds the organization of the account's assets that covers t:
// a domain exactly, a CIDR exactly, an address inside a range, a host name
// at or under a domain. Nothing covering t is 403; covered only by assets
// not yet verified or authorised is 403 too, saying so.
func owner(assets []scanstore.OrgAsset, t Target) (string, error) {
	covered := false
	for _, a := range assets {
		if !covers(a.Asset, t) {
			continue
		}
		if a.Authorized {
			return a.OrganizationID, nil
		}
		covered = true
	}
	if covered {
		return "", periscope.Errorf(periscope.EForbidden, "%s is registered but not verified: verify the domain (POST /enterprise/organizations/{org_id}/domains/verify) or ask an operator to authorise the range.", t.Value)
	}
	return "", periscope.Errorf(periscope.EForbidden, "%s is not a domain, IP or range registered to one of your organizations.", t.Value)
}

func covers(a scanstore.Asset, t Target) bool {
	switch a.Kind {
	case periscope.AssetDomain:
		switch t.Type {
		case scanstore.TargetDomain:
			return t.name == a.Value
		case scanstore.TargetHost:
			return t.name != "" && (t.name == a.Value || strings.HasSuffix(t.name, "."+a.Value))
		}
	case periscope.AssetIPRange:
		p, err := netip.ParsePrefix(a.Value)
		if err != nil {
			return false
		}
		switch t.Type {
		case scanstore.TargetIPRange:
			return t.pref == p.Masked()
		case scanstore.TargetHost:
			return t.addr.IsValid() && p.Contains(t.addr)
		}
	}
	return false
}

// RequestScan queues an on-demand scan of t for the account (origin
// scanstore.OriginOnDemand or OriginOEM), or returns the scan the account
// asked for within the deduplication window (deduplicated true). A new
// scan costs one credit of the pool charge, taken in the transaction that
// queues it (scanstore.Request.Charge); a repeat costs nothing.
func (s *Service) RequestScan(ctx context.Context, accountID, origin string, t Target, charge periscope.Pool) (scanstore.Scan, bool, error) {
	assets, err := s.d.Store.AccountAssets(ctx, accountID)
	if err != nil {
		return scanstore.Scan{}, false, err
	}
	org, err := owner(assets, t)
	if err != nil {
		return scanstore.Scan{}, false, err
	}
	sc, dedup, err := s.d.Store.Enqueue(ctx, scanstore.Request{AccountID: accountID, OrganizationID: org, Origin: origin,
		TargetType: t.Type, Target: t.Value, Charge: charge}, s.opt.DedupWindow)
	if err == nil && !dedup {
		s.Wake()
	}
	return sc, dedup, err
}
