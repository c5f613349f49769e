package vulnsync

import (
	"context"
	"time"
)

// untilDue returns how long Run waits before its first sync: until the
// earliest source's last attempt plus Interval, 0 when a source was never
// tried. The schedule lives in the database, so a restart, or another
// instance taking the sync's lease over, keeps it instead of syncing again
// at once.
func (s *Syncer) untilDue(ctx context.Context) (time.Duration, error) {
	states, err := s.Store.VulnSyncStates(ctx)
	if err != nil {
		return 0, err
	}
	names := []string{}
	for _, src := range s.Config.Sources() {
		names = append(names, src.Name)
	}
	if s.Config.NVDURL != "" {
		names = append(names, "nvd")
	}
	var due time.Time
	for i, n := range names {
		st, ok := states[n]
		if !ok || st.LastAttempt == 0 {
			return 0, nil
		}
		if t := time.Unix(st.LastAttempt, 0).Add(s.Interval); i == 0 || t.Before(due) {
			due = t
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	return max(0, due.Sub(s.now())), nil
}
