package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/store"
)

// benchDarkwebInsert runs `periscope-bench darkweb-insert`: the same-run
// baseline of `periscope ingest breach-csv`. Run right after an ingest into
// the same database, it copies the records the ingest stored (their rows as
// stored: id, key id, sealed blob, breach, breach date, source, date) into
// a table without any index, in transactions of --batch rows, by a plain
// INSERT on SQLite and COPY on PostgreSQL, through one connection with the
// ingest's page cache, and prints the rate of the writes alone (the reads
// of the rows are not timed). The ingest's rate divided by this one is the
// figure that survives a change of machine. The table is dropped at the
// end.
func benchDarkwebInsert(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stderr, "bench darkweb-insert")
	cfg.Register(fs, e.getenv)
	batch := fs.Int("batch", 5000, "rows a transaction (as the ingest writes its records)")
	if pos, err := cli.Parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("bench darkweb-insert: unexpected argument %q", pos[0])
	}
	if *batch < 1 {
		return fmt.Errorf("bench darkweb-insert: --batch must be at least 1")
	}
	st, err := cli.OpenStore(ctx, cfg.Database, store.PageCacheMiB(256))
	if err != nil {
		return err
	}
	defer st.Close()
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	pg := st.Engine() == "postgres"
	table, create := "darkweb.bench_plain_records", `CREATE TABLE darkweb.bench_plain_records (seq INTEGER, id BLOB, key_id TEXT,
		blob BLOB, breach TEXT, breach_date TEXT, source TEXT, date_added INTEGER)`
	if pg {
		table, create = "bench_plain_records", `CREATE TABLE bench_plain_records (seq BIGINT, id BYTEA, key_id TEXT,
			blob BYTEA, breach TEXT, breach_date TEXT, source TEXT, date_added BIGINT)`
	}
	for _, q := range []string{`DROP TABLE IF EXISTS ` + table, create} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("bench darkweb-insert: %w", err)
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+table)
	cols := []string{"seq", "id", "key_id", "blob", "breach", "breach_date", "source", "date_added"}
	insert := st.Rebind(`INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	read := st.Rebind(`SELECT ` + strings.Join(cols, ", ") + ` FROM darkweb_records WHERE seq > ? ORDER BY seq LIMIT ?`)
	var cursor, n int64
	var writing, cpu time.Duration
	for {
		rows, err := conn.QueryContext(ctx, read, cursor, *batch)
		if err != nil {
			return fmt.Errorf("bench darkweb-insert: read records: %w", err)
		}
		var got [][]any
		for rows.Next() {
			var seq, at int64
			var id, blob []byte
			var keyID, breach, date, source string
			if err := rows.Scan(&seq, &id, &keyID, &blob, &breach, &date, &source, &at); err != nil {
				rows.Close()
				return fmt.Errorf("bench darkweb-insert: read records: %w", err)
			}
			got = append(got, []any{seq, id, keyID, blob, breach, date, source, at})
			cursor = seq
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("bench darkweb-insert: read records: %w", err)
		}
		if len(got) == 0 {
			break
		}
		start, cpu0 := time.Now(), processCPU()
		if err := writeBatch(ctx, st, conn, pg, table, cols, insert, got); err != nil {
			return fmt.Errorf("bench darkweb-insert: %w", err)
		}
		writing, cpu = writing+time.Since(start), cpu+processCPU()-cpu0
		n += int64(len(got))
	}
	if n == 0 {
		return fmt.Errorf("bench darkweb-insert: no records stored in %s", cli.RedactDSN(cfg.Database))
	}
	how := "INSERT"
	if pg {
		how = "COPY"
	}
	fmt.Fprintf(e.stdout, "plain %s of %d stored records into a table without indexes (%s): %s of writes, %.0f records/s; %s of CPU (user+sys), %.0f records per CPU-second\n",
		how, n, st.Engine(), writing.Round(time.Millisecond), float64(n)/writing.Seconds(), cpu.Round(time.Millisecond), float64(n)/cpu.Seconds())
	return nil
}

// processCPU is this process's CPU time (user + system). On SQLite the
// writes run in it; on PostgreSQL the server's share is not counted.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeBatch writes one transaction of rows into table.
func writeBatch(ctx context.Context, st *store.Store, conn *sql.Conn, pg bool, table string, cols []string, insert string, rows [][]any) error {
	if pg {
		_, err := st.Dialect().CopyFrom(ctx, conn, table, cols, rows)
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, insert)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, r := range rows {
		if _, err := ins.ExecContext(ctx, r...); err != nil {
			return err
		}
	}
	return tx.Commit()
}
