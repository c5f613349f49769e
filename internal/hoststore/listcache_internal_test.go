package hoststore

import "testing"

// The listing memo keeps within its budget, evicting the least recently
// used entries, never holds what cannot fit, and answers only for the
// generation its entries were stored at.
func TestListCacheBudgetAndGenerations(t *testing.T) {
	k := func(s string) listKey { return listKey{rkey: s} }
	entry := recentSize(k("a"), 100) // every key is one byte long
	c := newListCache(newPostingCache(3 * entry))
	ids := make([]int64, 100)
	c.putRecent(1, k("a"), ids)
	c.putRecent(1, k("b"), ids)
	c.putRecent(1, k("c"), ids)
	c.recentIDs(1, k("a")) // b is now the least recently used
	c.putRecent(1, k("d"), ids)
	for key, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if _, ok := c.recentIDs(1, k(key)); ok != want {
			t.Errorf("%s held: %v, want %v", key, ok, want)
		}
	}
	if c.used != 3*entry {
		t.Errorf("%d bytes used, want %d", c.used, 3*entry)
	}
	c.putRecent(1, k("e"), make([]int64, 400))
	if _, ok := c.recentIDs(1, k("e")); ok {
		t.Error("an entry larger than the budget was stored")
	}
	if _, ok := c.recentIDs(1, k("a")); !ok {
		t.Error("an entry too large to store evicted others")
	}

	c.putTotals(1, k("a"), listTotals{n: 1})
	if _, ok := c.listTotals(0, k("a")); ok {
		t.Error("an older generation was answered")
	}
	if _, ok := c.listTotals(2, k("a")); ok {
		t.Error("a newer generation was answered from an older one")
	}
	if c.used != 0 || len(c.recent) != 0 {
		t.Errorf("a newer generation kept %d bytes", c.used)
	}
	c.putTotals(1, k("a"), listTotals{n: 1})
	if _, ok := c.listTotals(2, k("a")); ok {
		t.Error("an entry of an older generation was stored")
	}

	c.posts.budget = 0
	c.putTotals(2, k("a"), listTotals{n: 1})
	if _, ok := c.listTotals(2, k("a")); ok || c.used != 0 {
		t.Error("an entry was stored with a budget of 0")
	}
}
