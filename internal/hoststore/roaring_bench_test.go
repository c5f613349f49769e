package hoststore

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

// The facet count, the hot loop of /hosts/count, two ways: the stored
// posting rows (gap lists and byte bitmaps, postings.go) counted against a
// word bitmap of the matches (idBitmap.countRow), against the same rows
// stored as serialised roaring bitmaps counted with AndCardinality. The
// dataset is a million hosts in batches of 20,000 (one row per term and
// batch, as ingest writes them), a 200-value field with a skewed
// distribution (a country-like facet), and a query matching 20%.

// cpuTime returns the process's user and system CPU time: on a shared
// machine it moves far less with the load than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

const (
	benchHosts = 1_000_000
	benchBatch = 20_000
	benchTerms = 200
)

type benchRows struct {
	rows    [][]int64 // per term and batch, the ids
	match   []int64   // the matching ids, ascending
	blobs   [][]byte  // the rows as stored (encodePostingIDs)
	roaring [][]byte  // the rows as serialised roaring bitmaps
}

func makeBenchRows() *benchRows {
	r := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(r, 1.3, 1, benchTerms-1)
	var out benchRows
	for lo := int64(1); lo <= benchHosts; lo += benchBatch {
		perTerm := make([][]int64, benchTerms)
		for id := lo; id < lo+benchBatch; id++ {
			t := zipf.Uint64()
			perTerm[t] = append(perTerm[t], id)
		}
		for _, ids := range perTerm {
			if len(ids) > 0 {
				out.rows = append(out.rows, ids)
			}
		}
	}
	for id := int64(1); id <= benchHosts; id++ {
		if r.IntN(5) == 0 {
			out.match = append(out.match, id)
		}
	}
	for _, ids := range out.rows {
		out.blobs = append(out.blobs, encodePostingIDs(ids))
		rb := roaring.New()
		for _, id := range ids {
			rb.Add(uint32(id))
		}
		rb.RunOptimize()
		b, err := rb.ToBytes()
		if err != nil {
			panic(err)
		}
		out.roaring = append(out.roaring, b)
	}
	return &out
}

func BenchmarkFacetCountRows(b *testing.B) {
	d := makeBenchRows()
	m := newIDBitmap(0, benchHosts)
	for _, id := range d.match {
		m.set(id)
	}
	size := 0
	for _, blob := range d.blobs {
		size += len(blob)
	}
	b.ResetTimer()
	defer func() { b.ReportMetric(float64(size), "stored-bytes") }()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		total := 0
		for i, ids := range d.rows {
			c, err := m.countRow(ids[0], len(ids), d.blobs[i])
			if err != nil {
				b.Fatal(err)
			}
			total += c
		}
		if total != len(d.match) {
			b.Fatalf("counted %d of %d", total, len(d.match))
		}
	}
}

func BenchmarkFacetCountRoaring(b *testing.B) {
	d := makeBenchRows()
	m := roaring.New()
	for _, id := range d.match {
		m.Add(uint32(id))
	}
	size := 0
	for _, blob := range d.roaring {
		size += len(blob)
	}
	b.ResetTimer()
	defer func() { b.ReportMetric(float64(size), "stored-bytes") }()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		total := 0
		for _, blob := range d.roaring {
			rb := roaring.New()
			if _, err := rb.FromUnsafeBytes(blob); err != nil {
				b.Fatal(err)
			}
			total += int(m.AndCardinality(rb))
		}
		if total != len(d.match) {
			b.Fatalf("counted %d of %d", total, len(d.match))
		}
	}
}

// BenchmarkFacetCountRoaringDecoded is roaring with every row already
// decoded (posting lists held in memory): the floor of the roaring path.
func BenchmarkFacetCountRoaringDecoded(b *testing.B) {
	d := makeBenchRows()
	m := roaring.New()
	for _, id := range d.match {
		m.Add(uint32(id))
	}
	rbs := make([]*roaring.Bitmap, len(d.roaring))
	for i, blob := range d.roaring {
		rbs[i] = roaring.New()
		if _, err := rbs[i].FromBuffer(blob); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		total := 0
		for _, rb := range rbs {
			total += int(m.AndCardinality(rb))
		}
		if total != len(d.match) {
			b.Fatalf("counted %d of %d", total, len(d.match))
		}
	}
}

// BenchmarkQuerySetAnd is the other hot loop: ANDing two evaluated sets of
// a million ids and counting the result, the word bitmap against roaring.
func BenchmarkQuerySetAnd(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	x, y := newIDBitmap(0, benchHosts), newIDBitmap(0, benchHosts)
	rx, ry := roaring.New(), roaring.New()
	for id := int64(1); id <= benchHosts; id++ {
		if r.IntN(5) == 0 {
			x.set(id)
			rx.Add(uint32(id))
		}
		if r.IntN(2) == 0 {
			y.set(id)
			ry.Add(uint32(id))
		}
	}
	b.Run("words", func(b *testing.B) {
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			z := x.clone()
			z.and(y)
			_ = z.count()
		}
	})
	b.Run("roaring", func(b *testing.B) {
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			z := roaring.And(rx, ry)
			_ = z.GetCardinality()
		}
	})
}
