package darkwebstore

import (
	"context"
	"runtime"
	"sync"
)

// A page of many records is read in two steps: the page's record numbers
// from the index alone, then the records by number in chunks, on every
// core at once. A page of 1,000 records is 1,000 random reads of the
// records table (the cost of a large answer at 10 million records), which
// one query runs one after the other; decrypting them already runs on
// every core (open).
const (
	// parallelPageMin is the page size from which a page is read in two
	// steps; smaller pages are one query (one round trip fewer).
	parallelPageMin = 256
	// seqChunk is how many records one query reads: every query has
	// exactly this many parameters (padded with a number no record has),
	// so one prepared statement serves every chunk.
	seqChunk = 250
)

// pageRows reads and decrypts a page of records: joined is the one-query
// form (the page from the index joined to its records), recs the same
// page's record numbers alone (rec, then anything else it selects); both
// take args. Pages of up to parallelPageMin (limit) are read with joined.
// The rows and their results come back in the same order: the index's
// for a two-step page, else unset. head, when set, is asked first for a
// two-step page of at least headMin records (headRows, listHeadRows; ok
// false: read the records by number), with the page's dates when recs
// selects them second.
func (d *Store) pageRows(ctx context.Context, limit int, head func(seqs, ds []int64) ([]row, []Result, bool, error), joined, recs string, args ...any) ([]row, []Result, error) {
	if limit < parallelPageMin {
		rows, err := d.query(ctx, joined, args...)
		if err != nil {
			return nil, nil, err
		}
		return d.scanOpen(rows, limit)
	}
	rows, err := d.query(ctx, recs, args...)
	if err != nil {
		return nil, nil, err
	}
	var seqs, ds []int64
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, nil, err
	}
	dst := make([]any, len(cols))
	var seq int64
	dst[0] = &seq
	for i := 1; i < len(dst); i++ {
		dst[i] = new(any)
	}
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			rows.Close()
			return nil, nil, err
		}
		seqs = append(seqs, seq)
		if len(dst) > 1 {
			if at, ok := (*dst[1].(*any)).(int64); ok {
				ds = append(ds, at)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if head != nil && len(seqs) >= headMin {
		out, res, ok, err := head(seqs, ds)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return out, res, nil
		}
	}
	return d.recordsBySeq(ctx, seqs)
}

// recordsBySeq reads and decrypts the records numbered seqs, in chunks of
// seqChunk, as many chunks at once as there are cores, each on its own
// connection (a chunk's rows are decrypted as they arrive: scanOpen). The
// rows come back in the order of seqs (in no set order if a record is
// missing). SQLite takes exactly seqChunk
// parameters a query (one prepared statement for every chunk);
// PostgreSQL one array (a generic plan for hundreds of scalar parameters
// can scan the whole table).
func (d *Store) recordsBySeq(ctx context.Context, seqs []int64) ([]row, []Result, error) {
	q := d.dl.seqsIn(recordCols)
	n := (len(seqs) + seqChunk - 1) / seqChunk
	parts := make([][]row, n)
	results := make([][]Result, n)
	err := inParallel(n, func(i int) error {
		chunk := seqs[i*seqChunk : min((i+1)*seqChunk, len(seqs))]
		rows, err := d.query(ctx, q, d.dl.seqArgs(chunk)...)
		if err != nil {
			return err
		}
		parts[i], results[i], err = d.scanOpen(rows, len(chunk))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if out, res, ok := inOrder(seqs, parts, results); ok {
		return out, res, nil
	}
	var out []row
	var res []Result
	for i := range parts {
		out = append(out, parts[i]...)
		res = append(res, results[i]...)
	}
	return out, res, nil
}

// inOrder joins the chunks' rows and results in the order of seqs (the
// index's order: newest first), when each of seqs has exactly one row;
// ok is false otherwise (a record gone, a number twice).
func inOrder(seqs []int64, parts [][]row, results [][]Result) (out []row, res []Result, ok bool) {
	at := make(map[int64]int, len(seqs))
	for i, seq := range seqs {
		at[seq] = i
	}
	if len(at) != len(seqs) {
		return nil, nil, false
	}
	out, res = make([]row, len(seqs)), make([]Result, len(seqs))
	n := 0
	for p := range parts {
		for i := range parts[p] {
			j, found := at[parts[p][i].seq]
			if !found {
				return nil, nil, false
			}
			out[j], res[j] = parts[p][i], results[p][i]
			n++
		}
	}
	return out, res, n == len(seqs)
}

// inParallel runs fn(0) to fn(n-1), as many at once as there are cores
// (each a chunk of a page, on a connection of its own), and returns the
// error of the lowest i that failed.
func inParallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
