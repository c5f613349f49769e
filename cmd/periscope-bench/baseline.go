package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
)

// benchBaseline builds, beside our store in the same PostgreSQL database,
// the design an engineer would pick in an afternoon instead of our posting
// lists: one table of JSONB host documents (the host objects our export
// writes) with a GIN (jsonb_path_ops) index, a b-tree on the reversed name
// for subdomains and one on the address for ranges, loaded with COPY; then
// it times the same query mix as `periscope-bench search` written as JSONB
// containment and key-range SQL, each answer with its exact total like
// ours. Its SQL is printed, so that anyone can check it.
func benchBaseline(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stderr, "bench baseline")
	cfg.Register(fs, e.getenv)
	count := fs.Int("count", 1000000, "hosts to generate and load (--load), or that were loaded")
	seed := fs.Uint64("seed", 1, "random seed (use gen-hosts' for the same hosts as our store)")
	now := fs.Int64("now", 0, "reference time given to gen-hosts (0: now)")
	load := fs.Bool("load", true, "drop, create and load the baseline table; false reuses it")
	rounds := fs.Int("rounds", 20, "times each query of the mix runs")
	workMem := fs.String("work-mem", "64MB", "work_mem of the baseline's session")
	timeout := fs.Duration("timeout", 0, "statement_timeout of the baseline's queries (0: none); a query past it is reported as timed out")
	if pos, err := cli.Parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("bench baseline: unexpected argument %q", pos[0])
	}
	if !strings.HasPrefix(cfg.Database, "postgres") {
		return fmt.Errorf("bench baseline: --database must be a postgres:// URL (the baseline is PostgreSQL's)")
	}
	st, err := cli.OpenStore(ctx, cfg.Database)
	if err != nil {
		return err
	}
	defer st.Close()
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SET work_mem = '`+strings.ReplaceAll(*workMem, "'", "")+`'`); err != nil {
		return fmt.Errorf("bench baseline: work_mem: %w", err)
	}
	if *now == 0 {
		*now = time.Now().Unix()
	}
	g := hostgen.New(*count, *seed, *now)
	if *load {
		for _, q := range baselineSchema {
			fmt.Fprintln(e.stdout, q+";")
			if strings.HasPrefix(q, "CREATE INDEX") || strings.HasPrefix(q, "ANALYZE") {
				continue // after the load
			}
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("bench baseline: %s: %w", q, err)
			}
		}
		start := time.Now()
		batch := make([][]any, 0, 5000)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			if _, err := st.Dialect().CopyFrom(ctx, conn, "baseline_hosts", []string{"name", "rname", "ip", "doc"}, batch); err != nil {
				return err
			}
			batch = batch[:0]
			return nil
		}
		err := g.All(func(h host.Host) error {
			doc, err := json.Marshal(h)
			if err != nil {
				return err
			}
			var ip any
			if a, err := netip.ParseAddr(h.IPAddress); err == nil {
				ip = a.String()
			}
			batch = append(batch, []any{h.Host, host.ReverseKey(h.Host), ip, string(doc)})
			if len(batch) == cap(batch) {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("bench baseline: load: %w", err)
		}
		copied := time.Since(start)
		for _, q := range baselineSchema {
			if !strings.HasPrefix(q, "CREATE INDEX") && !strings.HasPrefix(q, "ANALYZE") {
				continue
			}
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("bench baseline: %s: %w", q, err)
			}
		}
		total := time.Since(start)
		fmt.Fprintf(e.stdout, "loaded %d hosts: COPY %s, with indexes and ANALYZE %s: %.0f hosts/s\n",
			*count, copied.Round(time.Millisecond), total.Round(time.Millisecond), float64(*count)/total.Seconds())
	}
	var bytes int64
	if err := conn.QueryRowContext(ctx, `SELECT pg_total_relation_size('baseline_hosts')`).Scan(&bytes); err != nil {
		return fmt.Errorf("bench baseline: size: %w", err)
	}
	fmt.Fprintf(e.stdout, "baseline_hosts with its indexes: %d bytes, %.0f bytes a host\n", bytes, float64(bytes)/float64(*count))

	var names []string
	for i := 0; i < min(50, *count); i++ {
		names = append(names, g.Host(i).Host)
	}
	mix := baselineMix(names)
	if *timeout > 0 {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(`SET statement_timeout = %d`, timeout.Milliseconds())); err != nil {
			return fmt.Errorf("bench baseline: statement_timeout: %w", err)
		}
	}
	lat := map[string][]time.Duration{}
	timedOut := map[string]int{}
	var order []string
	for r := 0; r < *rounds; r++ {
		for _, q := range mix {
			if r == 0 && !slices.Contains(order, q.kind) {
				order = append(order, q.kind)
				fmt.Fprintf(e.stdout, "-- %s (e.g. $1 = %v)\n%s;\n", q.kind, q.args, q.sql)
				if q.count != "" {
					fmt.Fprintf(e.stdout, "%s;\n", q.count)
				}
			}
			start := time.Now()
			if err := runBaselineQuery(ctx, conn, q); canceled(err) && *timeout > 0 {
				timedOut[q.kind]++
			} else if err != nil {
				return fmt.Errorf("bench baseline: %s: %w", q.kind, err)
			}
			lat[q.kind] = append(lat[q.kind], time.Since(start))
		}
	}
	fmt.Fprintf(e.stdout, "%-36s %8s %10s %10s %10s %s\n", "query (baseline, SQL)", "queries", "p50", "p95", "p99", "timed out")
	for _, k := range order {
		l := lat[k]
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		pct := func(p float64) time.Duration { return l[int(float64(len(l)-1)*p)].Round(10 * time.Microsecond) }
		// A timed-out query counts at the timeout: the percentiles are then
		// lower bounds.
		fmt.Fprintf(e.stdout, "%-36s %8d %10s %10s %10s %d\n", k, len(l), pct(.50), pct(.95), pct(.99), timedOut[k])
	}
	return nil
}

// baselineSchema is the baseline's table, its indexes (built after the
// load, as anyone loading with COPY would) and its statistics.
var baselineSchema = []string{
	`DROP TABLE IF EXISTS baseline_hosts`,
	`CREATE UNLOGGED TABLE baseline_hosts (name text PRIMARY KEY, rname text NOT NULL, ip inet, doc jsonb NOT NULL)`,
	`CREATE INDEX baseline_hosts_doc ON baseline_hosts USING gin (doc jsonb_path_ops)`,
	`CREATE INDEX baseline_hosts_rname ON baseline_hosts (rname text_pattern_ops)`,
	`CREATE INDEX baseline_hosts_ip ON baseline_hosts (ip)`,
	`ANALYZE baseline_hosts`,
}

// baselineQuery is one query of the baseline's mix: the page (sql, 100
// rows in name order like our answers) and the exact total (count).
type baselineQuery struct {
	kind, sql, count string
	args             []any
}

// baselineMix is `periscope-bench search`'s mix written for the baseline.
func baselineMix(names []string) []baselineQuery {
	contains := func(kind, doc string) baselineQuery {
		return baselineQuery{kind: kind,
			sql:   `SELECT doc FROM baseline_hosts WHERE doc @> $1::jsonb ORDER BY name LIMIT 100`,
			count: `SELECT count(*) FROM baseline_hosts WHERE doc @> $1::jsonb`, args: []any{doc}}
	}
	var qs []baselineQuery
	for _, d := range []string{
		`{"ip_metadata":{"country_code":"DE"}}`, `{"products":["nginx"]}`, `{"network_ports":[22]}`,
		`{"web":["WordPress"]}`, `{"ip_metadata":{"organization":"Hetzner Online GmbH"}}`, `{"ip_metadata":{"asn":16509}}`,
		`{"cloud":{"provider":"aws"}}`, `{"cdn":"cloudflare"}`, `{"tags":["login-page"]}`,
	} {
		qs = append(qs, contains("search, 1 filter", d))
	}
	for _, d := range []string{
		`{"ip_metadata":{"country_code":"US"},"network_ports":[443],"products":["nginx"]}`,
		`{"cloud":{"provider":"aws"},"web":["React"],"network_ports":[22]}`,
		`{"ip_metadata":{"asn":24940},"products":["OpenSSH"],"tags":["self-signed"]}`,
		`{"ip_metadata":{"country_code":"DE"},"web":["WordPress"],"network_ports":[80]}`,
	} {
		qs = append(qs, contains("search, 3 filters", d))
	}
	dom := hostgen.Domains[0].Name
	r := host.ReverseKey(dom)
	qs = append(qs, baselineQuery{kind: "subdomains " + dom + " (all)",
		sql:   `SELECT name FROM baseline_hosts WHERE rname = $1 OR rname LIKE $2 ORDER BY rname`,
		count: `SELECT count(*) FROM baseline_hosts WHERE rname = $1 OR rname LIKE $2`, args: []any{r, r + ".%"}})
	qs = append(qs, baselineQuery{kind: "subdomains, first 100",
		sql:   `SELECT name FROM baseline_hosts WHERE rname = $1 OR rname LIKE $2 ORDER BY rname LIMIT 100`,
		count: `SELECT count(*) FROM baseline_hosts WHERE rname = $1 OR rname LIKE $2`, args: []any{r, r + ".%"}})
	// Domain details: most recently seen first, as ours answers.
	qs = append(qs, baselineQuery{kind: "domain details, page 1000 of 100",
		sql: `SELECT doc FROM baseline_hosts WHERE rname = $1 OR rname LIKE $2
  ORDER BY (doc->>'last_seen')::bigint DESC, name LIMIT 100 OFFSET 99900`,
		count: `SELECT count(*) FROM baseline_hosts WHERE rname = $1 OR rname LIKE $2`, args: []any{r, r + ".%"}})
	qs = append(qs, baselineQuery{kind: "oem attack-surface /16, first 100",
		sql:   `SELECT doc FROM baseline_hosts WHERE ip << $1::inet ORDER BY ip LIMIT 100`,
		count: `SELECT count(*) FROM baseline_hosts WHERE ip << $1::inet`, args: []any{bigRange}})
	for _, n := range names {
		qs = append(qs, baselineQuery{kind: "host", sql: `SELECT doc FROM baseline_hosts WHERE name = $1`, args: []any{n}})
	}
	return qs
}

// canceled reports whether err is PostgreSQL's query_canceled, what a
// statement_timeout gives.
func canceled(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "57014"
}

// runBaselineQuery runs a query's page and count and reads every row.
func runBaselineQuery(ctx context.Context, conn *sql.Conn, q baselineQuery) error {
	for _, s := range []string{q.sql, q.count} {
		if s == "" {
			continue
		}
		rows, err := conn.QueryContext(ctx, s, q.args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var v any
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	return nil
}
