package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebgen"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// darkweb-insert copies every stored record into a table without indexes,
// reports the rate, and leaves the database as it found it; on a database
// without records it says so.
func TestDarkwebInsert(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, engine)
			if _, _, err := runBench(t, "darkweb-insert", "--database", dsn); err == nil || !strings.Contains(err.Error(), "no records") {
				t.Fatalf("empty database: %v", err)
			}
			s, err := store.Open(ctx, dsn, store.Files(schema.Sets()...))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Migrate(ctx, schema.Sets()...); err != nil {
				t.Fatal(err)
			}
			k, err := darkweb.NewKeyring(bytes.Repeat([]byte{3}, 32))
			if err != nil {
				t.Fatal(err)
			}
			d := darkwebstore.New(s)
			if err := d.Unlock(ctx, k); err != nil {
				t.Fatal(err)
			}
			g := darkwebgen.New(1, "example.com")
			var recs []darkweb.Record
			for range 12 {
				r := g.Record()
				if err := d.Normalizer().Clean(&r); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			if _, err := d.Add(ctx, recs); err != nil {
				t.Fatal(err)
			}
			out, stderr, err := runBench(t, "darkweb-insert", "--database", dsn, "--batch", "5")
			if err != nil || !strings.Contains(out, "of 12 stored records into a table without indexes") {
				t.Fatalf("%v\n%s\n%s", err, out, stderr)
			}
			var left int
			if err := s.QueryRow(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'bench_plain_records'`).Scan(&left); engine == "postgres" && (err != nil || left != 0) {
				t.Fatalf("table left behind: %d %v", left, err)
			}
		})
	}
}
