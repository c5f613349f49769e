package store

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// authCacheTTL bounds how long a change made by another process (a key
// revoked or an account updated from the CLI, credits spent through another
// server on the same database) can take to be seen. Changes made through this
// Store are seen at once: they invalidate the cache.
const authCacheTTL = 2 * time.Second

// authCache keeps recent Authenticate answers by the key's SHA-256 digest. Any write that
// can change an answer bumps gen and drops the entries; an answer read from
// the database is cached only if no such write happened while it was read,
// so a stale answer never outlives the write that made it stale.
type authCache struct {
	mu        sync.RWMutex
	m         map[[32]byte]authEntry
	byAccount map[string][][32]byte // account id → cached key digests
	gen       atomic.Uint64
}

type authEntry struct {
	p       periscope.Principal
	expires time.Time
}

func (c *authCache) get(hash [32]byte, now time.Time) (periscope.Principal, bool) {
	c.mu.RLock()
	e, ok := c.m[hash]
	c.mu.RUnlock()
	if !ok || now.After(e.expires) {
		return periscope.Principal{}, false
	}
	return e.p, true
}

func (c *authCache) put(hash [32]byte, p periscope.Principal, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen.Load() != gen {
		return
	}
	if c.m == nil || len(c.m) > 10000 {
		c.m, c.byAccount = map[[32]byte]authEntry{}, map[string][][32]byte{}
	}
	if _, ok := c.m[hash]; !ok {
		c.byAccount[p.Account.ID] = append(c.byAccount[p.Account.ID], hash)
	}
	c.m[hash] = authEntry{p: p, expires: now.Add(authCacheTTL)}
}

// invalidate drops the cached answers of one account, or of all accounts
// when accountID is empty.
func (c *authCache) invalidate(accountID string) {
	c.mu.Lock()
	c.gen.Add(1)
	if accountID == "" {
		clear(c.m)
		clear(c.byAccount)
	} else {
		for _, h := range c.byAccount[accountID] {
			delete(c.m, h)
		}
		delete(c.byAccount, accountID)
	}
	c.mu.Unlock()
}
