package store

import (
	"testing"
	"time"
)

func TestReplicaLag(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	samples := []lsnSample{{t0, 100}, {t0.Add(time.Second), 200}, {t0.Add(2 * time.Second), 300}}
	now := t0.Add(2 * time.Second)
	for _, c := range []struct {
		replayed uint64
		want     time.Duration
	}{
		{300, 0},                                // has all the primary had at the last sample
		{350, 0},                                // ahead of the last sample (a write since)
		{200, 0},                                // the primary was at 300 from t0+2s: behind since then
		{150, time.Second},                      // behind what the primary had at t0+1s
		{50, 2*time.Second + replicaCheckEvery}, // behind every sample kept
	} {
		if got := lagOf(samples, c.replayed, now); got != c.want {
			t.Errorf("replayed %d: lag %v, want %v", c.replayed, got, c.want)
		}
	}
	if got := lagOf(nil, 5, now); got != 0 {
		t.Errorf("no samples: %v", got)
	}
}

func TestReplicasNeedPostgres(t *testing.T) {
	_, err := Open(t.Context(), t.TempDir()+"/p.db", Replicas([]string{"postgres://x/y"}, time.Second))
	if err == nil {
		t.Fatal("a SQLite primary took a read replica")
	}
}
