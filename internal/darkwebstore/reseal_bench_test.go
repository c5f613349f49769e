package darkwebstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebgen"
	"github.com/periscope-oss/periscope/internal/store"
)

// BenchmarkReseal measures online key rotation: re-sealing
// PERISCOPE_DARKWEB_RESEAL_RECORDS generated records (default 20,000) with
// a second key of the keyring, on SQLite (or the PostgreSQL of
// PERISCOPE_BENCH_POSTGRES, emptied after each run). It reports records/s
// (wall) and CPU µs per record (the whole process, database excluded on
// PostgreSQL).
func BenchmarkReseal(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("PERISCOPE_DARKWEB_RESEAL_RECORDS")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ctx := context.Background()
		dsn := filepath.Join(b.TempDir(), "reseal.db")
		if pg := os.Getenv("PERISCOPE_BENCH_POSTGRES"); pg != "" {
			dsn = pg
		}
		s, err := store.Open(ctx, dsn, store.PageCacheMiB(256), store.Files(Migrations()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Migrate(ctx, Migrations()); err != nil {
			b.Fatal(err)
		}
		one, two := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
		k1, _ := darkweb.NewKeyringOf([][]byte{one})
		d := New(s)
		if err := d.Unlock(ctx, k1); err != nil {
			b.Fatal(err)
		}
		l, err := d.Loader(ctx)
		if err != nil {
			b.Fatal(err)
		}
		g := darkwebgen.New(3)
		batch := make([]darkweb.Record, 0, 2000)
		for j := 0; j < n; j++ {
			r := g.Record()
			r.Source = "bench"
			if err := d.Normalizer().Clean(&r); err != nil {
				b.Fatal(err)
			}
			batch = append(batch, r)
			if len(batch) == cap(batch) || j == n-1 {
				if _, err := l.Add(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		l.Close()
		k2, _ := darkweb.NewKeyringOf([][]byte{one, two})
		rot := New(s)
		if err := rot.Unlock(ctx, k2); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), resealCPU()
		done, left, err := rot.Reseal(ctx, nil)
		wall, cpu := time.Since(start), resealCPU()-cpu0
		b.StopTimer()
		if err != nil || left != 0 || done != n {
			b.Fatalf("reseal: %d of %d, %d left, %v", done, n, left, err)
		}
		b.ReportMetric(float64(n)/wall.Seconds(), "records/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/record")
		if os.Getenv("PERISCOPE_BENCH_POSTGRES") != "" {
			for _, t := range []string{"darkweb_index", "darkweb_counts", "darkweb_records", "darkweb_keys", "darkweb_reveal", "darkweb_breaches"} {
				s.DB().ExecContext(ctx, "DELETE FROM "+t)
			}
		}
		s.Close()
		b.StartTimer()
	}
}

func resealCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
