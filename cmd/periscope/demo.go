package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// demoProfile is one of the three demo accounts, shaped like FullHunt's tiers.
type demoProfile struct {
	company string
	email   string
	account periscope.Account
	org     string // organization created for enterprise profiles
}

func demoProfiles() []demoProfile {
	return []demoProfile{
		{company: "Demo Free", email: "free@demo.periscope.local",
			account: periscope.Account{Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 500}},
		{company: "Demo Enterprise", email: "enterprise@demo.periscope.local", org: "Demo Enterprise Org",
			account: periscope.Account{Plan: "enterprise", Enterprise: true, CreditsPerMonth: 3000, MaxResultsPerRequest: 100000}},
		{company: "Demo Enterprise OEM", email: "oem@demo.periscope.local", org: "Demo OEM Org",
			account: periscope.Account{Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 3000, OEMCreditsPerMonth: 5000, MaxResultsPerRequest: 100000}},
	}
}

// demoAccounts maps a profile name ("free", "enterprise", "oem") to its
// account and default organization, for capability demo loaders.
type demoAccounts map[string]struct {
	Account periscope.Account
	OrgID   string
}

// loadDemo creates (idempotently) the demo accounts, gives each a fresh key
// (the previous demo keys are revoked, so keys are never stored in clear
// anywhere), loads each capability's demo data and prints keys and examples.
func loadDemo(ctx context.Context, svc *services, out io.Writer, addr string) error {
	st := svc.store
	accounts := demoAccounts{}
	type printed struct{ name, key, company string }
	var keys []printed
	for i, p := range demoProfiles() {
		name := []string{"free", "enterprise", "oem"}[i]
		a, err := ensureDemoAccount(ctx, st, p)
		if err != nil {
			return err
		}
		orgID := ""
		if p.org != "" {
			orgs, err := st.Organizations(ctx, a.ID)
			if err != nil {
				return err
			}
			if len(orgs) == 0 {
				o := periscope.Organization{AccountID: a.ID, Name: p.org, Description: "Created by periscope serve --demo"}
				if err := st.CreateOrganization(ctx, &o); err != nil {
					return err
				}
				orgs = append(orgs, o)
			}
			orgID = orgs[0].ID
		}
		accounts[name] = struct {
			Account periscope.Account
			OrgID   string
		}{a, orgID}
		old, err := st.Keys(ctx, a.ID)
		if err != nil {
			return err
		}
		for _, k := range old {
			if k.RevokedAt == nil && k.Name == "demo" {
				if _, err := st.RevokeKey(ctx, k.ID); err != nil {
					return err
				}
			}
		}
		users, err := st.Users(ctx, a.ID)
		if err != nil {
			return err
		}
		key, _, err := st.CreateKey(ctx, a.ID, users[0].ID, "demo")
		if err != nil {
			return err
		}
		keys = append(keys, printed{name, key, p.company})
	}
	if err := loadCapabilityDemos(ctx, svc, accounts); err != nil {
		return err
	}
	base := "http://" + addr
	fmt.Fprintln(out, "Demo accounts (keys are new at every start; earlier demo keys were revoked):")
	for _, k := range keys {
		fmt.Fprintf(out, "  %-10s %-20s X-API-KEY: %s\n", k.name, k.company, k.key)
	}
	fmt.Fprintln(out, "Try:")
	for _, line := range demoCurls(base, keys[0].key, keys[1].key, keys[2].key) {
		fmt.Fprintln(out, "  "+line)
	}
	fmt.Fprintf(out, "  open %s/docs for the API reference\n", base)
	return nil
}

func ensureDemoAccount(ctx context.Context, st *store.Store, p demoProfile) (periscope.Account, error) {
	a, err := st.AccountByCompany(ctx, p.company)
	if err == nil {
		return a, nil
	}
	if !periscope.IsNotFound(err) {
		return a, err
	}
	a = p.account
	a.Company = p.company
	u := periscope.User{Email: p.email, FirstName: "Demo", LastName: strings.TrimPrefix(p.company, "Demo ")}
	if err := st.CreateAccount(ctx, &a, &u); err != nil {
		return a, err
	}
	return a, nil
}

// loadCapabilityDemos loads each capability's bundled demo data. Each
// capability adds one line here.
func loadCapabilityDemos(ctx context.Context, svc *services, accounts demoAccounts) error {
	// <demo:vuln>
	if err := loadVulnDemo(ctx, svc); err != nil {
		return err
	}
	// <demo:hosts>
	if sum, err := loadHostsDemo(ctx, svc); err != nil {
		return fmt.Errorf("host index demo: %w", err)
	} else {
		svc.log.Info("demo hosts loaded", "read", sum.Read, "inserted", sum.Inserted, "updated", sum.Updated, "unchanged", sum.Unchanged, "rejected", sum.Rejected)
	}
	// <demo:brand>
	if err := loadBrandDemo(ctx, svc, accounts); err != nil {
		return err
	}
	// <demo:whois>
	if err := loadWhoisDemo(ctx, svc); err != nil {
		return err
	}
	// <demo:darkweb>
	if err := loadDarkwebDemo(ctx, svc, accounts); err != nil {
		return err
	}
	// <demo:tor>
	if err := loadTorDemo(ctx, svc); err != nil {
		return err
	}
	// <demo:alerts>
	svc.workers = append(svc.workers, demoChanges(svc))
	return nil
}

// demoCurls returns example commands; capabilities add theirs.
func demoCurls(base, free, ent, oem string) []string {
	c := func(key, rest string) string {
		return fmt.Sprintf("curl -s -H 'X-API-KEY: %s' %s", key, rest)
	}
	out := []string{
		c(free, base+"/api/v1/auth/status"),
		c(ent, base+"/api/v1/enterprise/organizations"),
		c(oem, "-X POST -d '{\"query_tags\":{\"tenant\":\"demo\"}}' "+base+"/api/v1/oem/account/credits"),
		c(oem, "-X POST -d '{}' "+base+"/api/v1/oem/account/audit-logs"),
		// <curl:vuln>
		c(free, "'"+base+"/api/v1/vulnerability-intelligence/feed?keywords=CVE-2023-4863,CVE-2024-3094,GHSA-5h86-8mv2-jq9f'"),
		c(free, "'"+base+"/api/v1/vulnerability-intelligence/vulnerability-search?query=cpe:2.3:a:tukaani:xz'"),
		c(oem, "-H 'Content-Type: application/json' -X POST -d '{\"keywords\":\"CVE-2021-44228,CVE-2023-4863\",\"kev\":true}' "+base+"/api/v1/oem/vulnerability-intelligence/feed"),
		c(oem, "-H 'Content-Type: application/json' -X POST -d '{\"query\":\"remote code execution\"}' "+base+"/api/v1/oem/vulnerability-intelligence/vulnerability-search"),
		c(oem, "-H 'Content-Type: application/json' -X POST -d '{\"query\":\"denial of service\",\"ecosystem\":\"Go\"}' "+base+"/api/v1/oem/vulnerability-intelligence/advisories-search"),
		c(free, "'"+base+"/api/v1/vulnerability-intelligence/exploits-search?query=log4j'"),
		// <curl:hosts>
		// <curl:brand>
		c(ent, base+"/api/v1/enterprise/darkweb/typosquatting"),
		c(ent, "'"+base+"/api/v1/enterprise/darkweb/potential-phishing?q=github&from=01/01/2020'"),
		c(ent, base+"/api/v1/enterprise/certificates"),
		c(oem, "-H 'Content-Type: application/json' -d '{\"query\":\"github.com\"}' "+base+"/api/v1/oem/potential-phishing/search"),
		c(oem, "-H 'Content-Type: application/json' -d '{\"query\":\"github.com\"}' "+base+"/api/v1/oem/typosquatting/search"),
		// <curl:whois>
		c(oem, "-H 'Content-Type: application/json' -d '{\"domain\":\"google.com\"}' "+base+"/api/v1/oem/whois/lookup"),
		c(oem, "-H 'Content-Type: application/json' -d '{\"registrar\":\"markmonitor\"}' "+base+"/api/v1/oem/whois/search"),
	}
	out = append(out, hostsCurls(base, free, oem)...)
	// <curl:darkweb>
	out = append(out, darkwebCurls(base, ent, oem)...)
	// <curl:alerts>
	out = append(out, "# the enterprise organization's alerts, from the demo's changes, within about 25 s of the start:",
		c(ent, base+"/api/v1/enterprise/alerts"))
	return out
}
