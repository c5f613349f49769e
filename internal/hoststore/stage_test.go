package hoststore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// stageObs is the observation of host i at step v: its terms change with
// v, so that a later transaction merging it removes some terms and adds
// others, and one step brings back a term an earlier one removed.
func stageObs(i, v int) host.Host {
	h := host.Host{Host: fmt.Sprintf("h%03d.example.com", i), FirstSeen: 1, LastSeen: int64(10 + v)}
	h.NetworkPorts = []int{443, 8000 + (i+v)%3}
	if v%2 == 0 {
		h.Tags = []string{"even"}
	}
	h.Cert.SHA256Fingerprint = fmt.Sprintf("%064x", i*7+v%2) // unique a host, back after two steps
	return h
}

// stageTx stores the observations of hosts [lo, hi) at step v in one
// transaction of load.
func stageTx(t *testing.T, s *hoststore.Store, load *hoststore.HostLoad, lo, hi, v int) {
	t.Helper()
	ctx := context.Background()
	w, err := s.BeginHosts(ctx, load)
	if err != nil {
		t.Fatal(err)
	}
	for c := lo; c < hi; c += 7 { // several batches a transaction
		var hs []host.Host
		for i := c; i < min(c+7, hi); i++ {
			hs = append(hs, stageObs(i, v))
		}
		b, err := s.PrepareHosts(hs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Upsert(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// stageSteps is a load's transactions: new hosts, then the same hosts
// changed (terms removed and added), new ones among them, and again.
var stageSteps = []struct{ lo, hi, v int }{{0, 40, 0}, {20, 60, 1}, {0, 30, 2}, {50, 80, 3}, {10, 20, 4}}

// A load that stages its postings ends with the posting lists of a load
// that wrote them directly, term by term, however its transactions
// changed the hosts they stored before; until then, its hosts are found
// by name but not by term.
func TestStagedLoadEqualsDirectLoad(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) { testStagedLoad(t, e) })
		t.Run(e+"/reads of 3 rows, deletes every 10", func(t *testing.T) {
			defer hoststore.SetStageSteps(3, 10)()
			testStagedLoad(t, e)
		})
	}
}

func testStagedLoad(t *testing.T, e string) {
	ctx := context.Background()
	direct := hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
	staged := hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
	dl, sl := hoststore.NewHostLoad(), hoststore.NewHostLoad()
	sl.StagePostings()
	for _, st := range stageSteps {
		stageTx(t, direct, dl, st.lo, st.hi, st.v)
		stageTx(t, staged, sl, st.lo, st.hi, st.v)
	}
	if !sl.Staged() || dl.Staged() {
		t.Fatalf("staged: %v and %v, want only the staging load's", sl.Staged(), dl.Staged())
	}
	if got, err := staged.PostingSets(ctx); err != nil || len(got) != 0 {
		t.Fatalf("before the stage is entered, %d terms are posted (%v)", len(got), err)
	}
	if _, err := staged.Host(ctx, "h005.example.com"); err != nil {
		t.Fatalf("a staged host is not found by name: %v", err)
	}
	n, err := staged.FinishStagedPostings(ctx)
	if err != nil || n == 0 {
		t.Fatalf("entered %d staged rows: %v", n, err)
	}
	want, err := direct.PostingSets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := staged.PostingSets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		for term, ids := range want {
			if !reflect.DeepEqual(got[term], ids) {
				t.Errorf("%s: staged %v, direct %v", term, got[term], ids)
			}
		}
		t.Fatalf("%d terms staged, %d direct", len(got), len(want))
	}
	if n, err := staged.FinishStagedPostings(ctx); err != nil || n != 0 {
		t.Fatalf("a second finish entered %d rows (%v)", n, err)
	}
}

// Another writer enters a load's stage before it writes, so the index is
// exact at every commit; the load sees its stage gone and writes its
// postings directly from then on. A stage left by a load that stopped is
// entered by the next writer.
func TestStageEnteredByAnotherWriter(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) {
			ctx := context.Background()
			direct := hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
			staged := hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
			other := func(s *hoststore.Store, v int) {
				t.Helper()
				if _, err := s.UpsertHosts(ctx, []host.Host{stageObs(3, v), stageObs(200, v)}); err != nil {
					t.Fatal(err)
				}
			}
			dl, sl := hoststore.NewHostLoad(), hoststore.NewHostLoad()
			sl.StagePostings()
			for i, st := range stageSteps {
				stageTx(t, direct, dl, st.lo, st.hi, st.v)
				stageTx(t, staged, sl, st.lo, st.hi, st.v)
				if i == 1 {
					other(direct, 9)
					other(staged, 9)
					if got, err := staged.PostingSets(ctx); err != nil || len(got["tag:even"]) == 0 {
						t.Fatalf("after another writer, the load's hosts are not posted (%v)", err)
					}
				}
			}
			want, _ := direct.PostingSets(ctx)
			got, err := staged.PostingSets(ctx)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("postings differ (%v): %d terms, want %d", err, len(got), len(want))
			}
			if n, err := staged.FinishStagedPostings(ctx); err != nil || n != 0 {
				t.Fatalf("the load staged again after another writer entered its stage: %d rows (%v)", n, err)
			}

			// A load that stops (its process died) before it entered its
			// stage: the next writer enters it.
			direct = hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
			staged = hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
			dl, sl = hoststore.NewHostLoad(), hoststore.NewHostLoad()
			sl.StagePostings()
			stageTx(t, direct, dl, 0, 40, 0)
			stageTx(t, staged, sl, 0, 40, 0)
			other(direct, 1)
			other(staged, 1)
			want, _ = direct.PostingSets(ctx)
			if got, err = staged.PostingSets(ctx); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("after a stopped load and another writer, postings differ (%v): %d terms, want %d", err, len(got), len(want))
			}
		})
	}
}

// A stage entered over posting rows that someone wrote around the rule
// (none does: a stage begins on an empty index and every writer enters it
// first) is applied row by row in the order it was written, and the index
// still ends as a direct load's.
func TestStageAppliedOverStoredPostings(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) {
			ctx := context.Background()
			direct := hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
			staged := hoststore.New(storetest.Open(t, e, hoststore.Migrations()))
			dl, sl := hoststore.NewHostLoad(), hoststore.NewHostLoad()
			sl.StagePostings()
			for _, st := range stageSteps {
				stageTx(t, direct, dl, st.lo, st.hi, st.v)
				stageTx(t, staged, sl, st.lo, st.hi, st.v)
			}
			for _, s := range []*hoststore.Store{direct, staged} {
				// A row of its own and one at the key of a staged row
				// (tag:even's first host), which the stage merges into.
				for _, r := range []struct {
					term  string
					first int64
				}{{"tag:outside", 1}, {"tag:even", 1}} {
					if _, err := s.Core().Exec(ctx, `INSERT INTO host_postings (term, first_id, n, ids) VALUES (?, ?, 1, ?)`, r.term, r.first, []byte{}); err != nil {
						if s == direct && r.term == "tag:even" {
							continue // the direct load has that row already
						}
						t.Fatal(err)
					}
				}
			}
			if n, err := staged.FinishStagedPostings(ctx); err != nil || n == 0 {
				t.Fatalf("entered %d staged rows: %v", n, err)
			}
			want, err := direct.PostingSets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := staged.PostingSets(ctx)
			if err != nil || !reflect.DeepEqual(got, want) {
				for term, ids := range want {
					if !reflect.DeepEqual(got[term], ids) {
						t.Errorf("%s: staged %v, direct %v", term, got[term], ids)
					}
				}
				t.Fatalf("postings differ (%v): %d terms, want %d", err, len(got), len(want))
			}
		})
	}
}
