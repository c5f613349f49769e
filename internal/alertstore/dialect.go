package alertstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/periscope-oss/periscope/internal/store"
)

// dialect is how the alert tables' upkeep differs by engine.
type dialect interface {
	// overwriteDeleted makes conn overwrite deleted content on disk
	// until restore is called (SQLite's secure_delete); nothing on
	// PostgreSQL, whose old row versions purgeOld removes.
	overwriteDeleted(ctx context.Context, conn *sql.Conn) (restore func(), err error)
	// purgeOld removes what is left on disk of table's rows as they were
	// before the last writes: SQLite checkpoints the write-ahead log into
	// the database and truncates it, PostgreSQL vacuums the table. what
	// names the work in errors.
	purgeOld(ctx context.Context, conn *sql.Conn, table, what string) error
}

func dialectOf(d store.Dialect) dialect {
	if d.Name() == "postgres" {
		return pgDialect{}
	}
	return sqliteDialect{}
}

type sqliteDialect struct{}

func (sqliteDialect) overwriteDeleted(ctx context.Context, conn *sql.Conn) (func(), error) {
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return nil, err
	}
	return func() { conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = OFF`) }, nil
}

func (sqliteDialect) purgeOld(ctx context.Context, conn *sql.Conn, _, what string) error {
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint after %s: %w", what, err)
	}
	return nil
}

type pgDialect struct{}

func (pgDialect) overwriteDeleted(context.Context, *sql.Conn) (func(), error) { return func() {}, nil }

func (pgDialect) purgeOld(ctx context.Context, conn *sql.Conn, table, what string) error {
	if _, err := conn.ExecContext(ctx, `VACUUM `+table); err != nil {
		return fmt.Errorf("vacuum after %s: %w", what, err)
	}
	return nil
}
