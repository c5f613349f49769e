package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"text/tabwriter"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

const accountUsage = `usage:
  periscope account create --company NAME --email EMAIL [--first-name F] [--last-name L] [settings]
  periscope account list
  periscope account show ACCOUNT
  periscope account update ACCOUNT [settings]

ACCOUNT is an account id or company name. Settings:
  --plan LABEL  --enterprise[=false]  --oem[=false]  --credits N  --oem-credits N
  --max-results N  --rate-limit N (requests/min per key and route, in place of
    serve --rate-limit; 0 = deployment default)
  --max-organizations N  --max-domains N  --max-ranges N (quotas; 0 = the default:
    100 organizations, 250 domains and 250 IP ranges per account)
  --reveal-secrets[=false] (update only: dark-web passwords and hashes in clear)
`

// accountFlags binds the account settings to a flag set; set reports which
// were given, so update changes only those.
type accountFlags struct {
	plan                  string
	enterprise, oem       bool
	credits, oemCredits   int64
	maxResults, rateLimit int
	quotas                periscope.Quotas
}

func (f *accountFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.plan, "plan", "free", "plan label shown in /auth/status")
	fs.BoolVar(&f.enterprise, "enterprise", false, "Enterprise entitlement")
	fs.BoolVar(&f.oem, "oem", false, "OEM module entitlement")
	fs.Int64Var(&f.credits, "credits", 100, "monthly credits")
	fs.Int64Var(&f.oemCredits, "oem-credits", 0, "monthly OEM credits")
	fs.IntVar(&f.maxResults, "max-results", 100, "max results per request")
	fs.IntVar(&f.rateLimit, "rate-limit", 0, "requests per minute per key on each route, in place of --rate-limit (0 = deployment default)")
	d := periscope.DefaultQuotas
	fs.IntVar(&f.quotas.Organizations, "max-organizations", 0, fmt.Sprintf("organizations of the account (0 = default, %d)", d.Organizations))
	fs.IntVar(&f.quotas.Domains, "max-domains", 0, fmt.Sprintf("organization domains of the account (0 = default, %d)", d.Domains))
	fs.IntVar(&f.quotas.Ranges, "max-ranges", 0, fmt.Sprintf("organization IP ranges of the account (0 = default, %d)", d.Ranges))
}

func (f *accountFlags) apply(fs *flag.FlagSet, a *periscope.Account) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "plan":
			a.Plan = f.plan
		case "enterprise":
			a.Enterprise = f.enterprise
		case "oem":
			a.OEM = f.oem
		case "credits":
			a.CreditsPerMonth = f.credits
		case "oem-credits":
			a.OEMCreditsPerMonth = f.oemCredits
		case "max-results":
			a.MaxResultsPerRequest = f.maxResults
		case "rate-limit":
			a.RateLimit = f.rateLimit
		case "max-organizations":
			a.Quotas.Organizations = f.quotas.Organizations
		case "max-domains":
			a.Quotas.Domains = f.quotas.Domains
		case "max-ranges":
			a.Quotas.Ranges = f.quotas.Ranges
		}
	})
	if a.CreditsPerMonth < 0 || a.OEMCreditsPerMonth < 0 || a.MaxResultsPerRequest < 1 || a.RateLimit < 0 {
		err = errors.New("--credits, --oem-credits and --rate-limit must be >= 0 and --max-results >= 1")
	}
	if q := a.Quotas; q.Organizations < 0 || q.Domains < 0 || q.Ranges < 0 {
		err = errors.New("--max-organizations, --max-domains and --max-ranges must be >= 0 (0 = the default)")
	}
	return err
}

func cmdAccount(ctx context.Context, e env, args []string) error {
	sub, args, err := subcommand(e, "account", accountUsage, args)
	if err != nil {
		return err
	}
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "account "+sub)
	cli.SetUsage(fs, accountUsage)
	cfg.Register(fs, e.getenv)
	var af accountFlags
	var company, email, first, last string
	var reveal bool
	switch sub {
	case "create":
		af.register(fs)
		fs.StringVar(&company, "company", "", "company name (unique)")
		fs.StringVar(&email, "email", "", "first user's e-mail")
		fs.StringVar(&first, "first-name", "", "first user's first name")
		fs.StringVar(&last, "last-name", "", "first user's last name")
	case "update":
		af.register(fs)
		fs.StringVar(&company, "company", "", "new company name")
		fs.BoolVar(&reveal, "reveal-secrets", false, "show dark-web passwords and hashes to this account in clear for every record (=false to stop)")
	case "list", "show":
	default:
		return cli.Usagef("account", "unknown subcommand %q", sub)
	}
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{MustExist: sub != "create", Log: e.stderr, LogLevel: cfg.LogLevel})
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "create":
		if company == "" || email == "" {
			return errors.New("account create: --company and --email are required")
		}
		a := periscope.Account{Company: company, Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 100}
		if err := af.apply(fs, &a); err != nil {
			return err
		}
		u := periscope.User{Email: email, FirstName: first, LastName: last}
		if err := st.CreateAccount(ctx, &a, &u); err != nil {
			return fmt.Errorf("account create: %s", periscope.ErrorMessage(err))
		}
		fmt.Fprintf(e.stdout, "created account %s (%s) with user %s\n", a.ID, a.Company, u.Email)
		fmt.Fprintf(e.stdout, "create a key with: periscope key create --account %q\n", a.Company)
		return nil
	case "list":
		accts, err := st.Accounts(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCOMPANY\tPLAN\tENTERPRISE\tOEM\tCREDITS\tOEM CREDITS")
		for _, a := range accts {
			used, oemUsed := a.Usage(st.Now())
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%d/%d\t%d/%d\n", a.ID, a.Company, a.Plan, a.Enterprise, a.OEM,
				used, a.CreditsPerMonth, oemUsed, a.OEMCreditsPerMonth)
		}
		return tw.Flush()
	}
	if len(pos) != 1 {
		return fmt.Errorf("account %s: give one account id or company name", sub)
	}
	a, err := findAccount(ctx, st, pos[0])
	if err != nil {
		return err
	}
	if sub == "update" {
		if err := af.apply(fs, &a); err != nil {
			return err
		}
		if company != "" {
			a.Company = company
		}
		if err := st.UpdateAccount(ctx, a); err != nil {
			return fmt.Errorf("account update: %s", periscope.ErrorMessage(err))
		}
		if flagSet(fs, "reveal-secrets") {
			if err := setRevealSecrets(ctx, st, a.ID, reveal); err != nil {
				return fmt.Errorf("account update: %w", err)
			}
			fmt.Fprintf(e.stdout, "reveal-secrets:          %v\n", reveal)
		}
	}
	return showAccount(ctx, e, st, a)
}

func findAccount(ctx context.Context, st *store.Store, idOrCompany string) (periscope.Account, error) {
	a, err := st.Account(ctx, idOrCompany)
	if periscope.IsNotFound(err) {
		a, err = st.AccountByCompany(ctx, idOrCompany)
	}
	if periscope.IsNotFound(err) {
		return a, fmt.Errorf("no account with id or company %q", idOrCompany)
	}
	return a, err
}

func showAccount(ctx context.Context, e env, st *store.Store, a periscope.Account) error {
	used, oemUsed := a.Usage(st.Now())
	w := e.stdout
	fmt.Fprintf(w, "id:                      %s\n", a.ID)
	fmt.Fprintf(w, "company:                 %s\n", a.Company)
	fmt.Fprintf(w, "plan:                    %s\n", a.Plan)
	fmt.Fprintf(w, "enterprise:              %v\n", a.Enterprise)
	fmt.Fprintf(w, "oem:                     %v\n", a.OEM)
	fmt.Fprintf(w, "credits:                 %d used of %d this month\n", used, a.CreditsPerMonth)
	fmt.Fprintf(w, "oem credits:             %d used of %d this month\n", oemUsed, a.OEMCreditsPerMonth)
	fmt.Fprintf(w, "max results per request: %d\n", a.MaxResultsPerRequest)
	if a.RateLimit > 0 {
		fmt.Fprintf(w, "rate limit:              %d/min per key\n", a.RateLimit)
	} else {
		fmt.Fprintf(w, "rate limit:              deployment default\n")
	}
	q, eff := a.Quotas, a.Quotas.Effective()
	for _, l := range []struct {
		name      string
		set, used int
	}{{"max organizations:", q.Organizations, eff.Organizations}, {"max domains:", q.Domains, eff.Domains}, {"max ip ranges:", q.Ranges, eff.Ranges}} {
		note := ""
		if l.set == 0 {
			note = " (default)"
		}
		fmt.Fprintf(w, "%-25s%d%s\n", l.name, l.used, note)
	}
	users, err := st.Users(ctx, a.ID)
	if err != nil {
		return err
	}
	for _, u := range users {
		fmt.Fprintf(w, "user:                    %s %s <%s> (%s)\n", u.FirstName, u.LastName, u.Email, u.ID)
	}
	return nil
}
