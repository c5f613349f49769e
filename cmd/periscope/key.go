package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"text/tabwriter"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/periscope"
)

const keyUsage = `usage:
  periscope key create --account ACCOUNT [--email USER_EMAIL] [--name LABEL]
  periscope key list --account ACCOUNT
  periscope key revoke KEY_ID_OR_PREFIX

The key is printed once, at creation; only its hash is stored.
`

func cmdKey(ctx context.Context, e env, args []string) error {
	sub, args, err := subcommand(e, "key", keyUsage, args)
	if err != nil {
		return err
	}
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "key "+sub)
	cli.SetUsage(fs, keyUsage)
	cfg.Register(fs, e.getenv)
	var account, email, name string
	switch sub {
	case "create":
		fs.StringVar(&account, "account", "", "account id or company name")
		fs.StringVar(&email, "email", "", "the user the key belongs to (default: the account's first user)")
		fs.StringVar(&name, "name", "", "a label for the key")
	case "list":
		fs.StringVar(&account, "account", "", "account id or company name")
	case "revoke":
	default:
		return cli.Usagef("key", "unknown subcommand %q", sub)
	}
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{MustExist: true, Log: e.stderr, LogLevel: cfg.LogLevel})
	if err != nil {
		return err
	}
	defer st.Close()
	if sub == "revoke" {
		if len(pos) != 1 {
			return errors.New("key revoke: give one key id or prefix")
		}
		k, err := st.RevokeKey(ctx, pos[0])
		if err != nil {
			return fmt.Errorf("key revoke: %s", periscope.ErrorMessage(err))
		}
		fmt.Fprintf(e.stdout, "revoked key %s (%s…)\n", k.ID, k.Prefix)
		return nil
	}
	if account == "" {
		return fmt.Errorf("key %s: --account is required", sub)
	}
	a, err := findAccount(ctx, st, account)
	if err != nil {
		return err
	}
	if sub == "list" {
		keys, err := st.Keys(ctx, a.ID)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tCREATED\tREVOKED")
		for _, k := range keys {
			revoked := "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.Format("2006-01-02 15:04")
			}
			fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.CreatedAt.Format("2006-01-02 15:04"), revoked)
		}
		return tw.Flush()
	}
	users, err := st.Users(ctx, a.ID)
	if err != nil {
		return err
	}
	userID := ""
	for _, u := range users {
		if email == "" || u.Email == email {
			userID = u.ID
			break
		}
	}
	if userID == "" {
		return fmt.Errorf("key create: account %q has no user %q", a.Company, email)
	}
	key, k, err := st.CreateKey(ctx, a.ID, userID, name)
	if err != nil {
		return fmt.Errorf("key create: %s", periscope.ErrorMessage(err))
	}
	fmt.Fprintf(e.stdout, "%s\n", key)
	fmt.Fprintf(e.stderr, "created key %s for %s; store it now: it is not shown again\n", k.ID, a.Company)
	return nil
}
