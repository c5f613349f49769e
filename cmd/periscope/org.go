package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/store"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

const orgUsage = `usage:
  periscope org authorize-domain ORG_ID DOMAIN  mark a domain of the organization verified (no DNS check);
                                                verify-domain is the same command
  periscope org authorize-range ORG_ID CIDR     allow active monitoring to probe an IP range of the organization
  periscope org assets ORG_ID                   list the organization's assets and whether each may be probed

Only verified domains and authorised ranges are ever actively probed, and
dark-web secrets (passwords, hashes) are shown in clear only under verified
domains. A customer verifies a domain itself with a DNS TXT record (see
docs/security.md); these commands are for operators who checked ownership
another way. The asset must already be the organization's. Each
authorisation is recorded in the account's audit log (key "operator").
`

func cmdOrg(ctx context.Context, e env, args []string) error {
	sub, args, err := subcommand(e, "org", orgUsage, args)
	if err != nil {
		return err
	}
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "org "+sub)
	cli.SetUsage(fs, orgUsage)
	cfg.Register(fs, e.getenv)
	want := map[string]int{"authorize-domain": 2, "verify-domain": 2, "authorize-range": 2, "assets": 1}[sub]
	if want == 0 {
		return cli.Usagef("org", "unknown subcommand %q", sub)
	}
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != want {
		return cli.Usagef("org "+sub, "give %d arguments", want)
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{MustExist: true, Log: e.stderr, LogLevel: cfg.LogLevel})
	if err != nil {
		return err
	}
	defer st.Close()
	ss := scanstore.New(st)
	acct, err := ss.OrgAccount(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("org %s: %s", sub, periscope.ErrorMessage(err))
	}
	svc := activescan.New(activescan.Options{}, activescan.Deps{Store: ss})
	switch sub {
	case "authorize-domain", "verify-domain":
		err = svc.Authorize(ctx, pos[0], periscope.AssetDomain, pos[1])
	case "authorize-range":
		err = svc.Authorize(ctx, pos[0], periscope.AssetIPRange, pos[1])
	}
	if err != nil {
		return fmt.Errorf("org %s: %s", sub, periscope.ErrorMessage(err))
	}
	if sub != "assets" {
		if err := auditOperator(ctx, st, acct, "org "+sub, map[string]string{"organization_id": pos[0], "asset": pos[1]}); err != nil {
			return fmt.Errorf("org %s: %w", sub, err)
		}
		if sub == "authorize-range" {
			fmt.Fprintf(e.stdout, "%s may now be probed by active monitoring\n", pos[1])
		} else {
			fmt.Fprintf(e.stdout, "%s is verified: active monitoring may probe it and its dark-web records show their secrets to the organization's account\n", pos[1])
		}
		return nil
	}
	assets, err := ss.Assets(ctx, pos[0])
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tVALUE\tPROBED\tHOW")
	for _, a := range assets {
		how := a.Method
		if how == "" {
			how = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", a.Kind, a.Value, a.Authorized, how)
	}
	return tw.Flush()
}

// auditOperator records an operator's command in the account's audit log
// (shown by POST /oem/account/audit-logs), under the key prefix
// "operator" and the method "CLI".
func auditOperator(ctx context.Context, st *store.Store, accountID, command string, args map[string]string) error {
	req, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return st.AddAudit(ctx, &periscope.AuditEntry{AccountID: accountID, KeyPrefix: "operator", Time: st.Now(),
		Method: "CLI", Endpoint: "periscope " + command, StatusCode: 200, Request: req})
}
