package config

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Instances holds the settings of running several instances on one
// database, and of the per-account work limits that protect them.
type Instances struct {
	// RateLimitStore is where the per-key, per-account and failed-
	// authentication counts live: "memory" (this process) or a redis:// or
	// rediss:// URL shared by every instance.
	RateLimitStore string
	// LeaseTTL is how long a background job's lease lasts without renewal
	// (PostgreSQL; a dead instance's jobs move within LeaseTTL*4/3).
	LeaseTTL time.Duration
	// AssetChangeLimit is how many organization and asset changes an
	// account may make per minute; 0 turns the limit off.
	AssetChangeLimit int
	// BrandWorkers bounds the goroutines computing new brands' candidates.
	BrandWorkers int
	// WebhookLimit caps an organization's webhook endpoints, and so the
	// deliveries one alert makes.
	WebhookLimit int
	// Replicas are PostgreSQL streaming replicas of the database that serve
	// the reads of read-only requests; ReplicaMaxLag is how far behind one
	// may be before it is skipped.
	Replicas      []string
	ReplicaMaxLag time.Duration
}

func (c *Instances) register(fs *flag.FlagSet, getenv Getenv) error {
	store := getenv("PERISCOPE_RATE_LIMIT_STORE")
	if store == "" {
		store = "memory"
	}
	ttl, err := envDuration(getenv, "PERISCOPE_LEASE_TTL", 30*time.Second)
	if err != nil {
		return err
	}
	acl, err := envInt(getenv, "PERISCOPE_ASSET_CHANGE_LIMIT", 30)
	if err != nil {
		return err
	}
	bw, err := envInt(getenv, "PERISCOPE_BRAND_WORKERS", max(1, runtime.GOMAXPROCS(0)/2))
	if err != nil {
		return err
	}
	wl, err := envInt(getenv, "PERISCOPE_WEBHOOK_LIMIT", 10)
	if err != nil {
		return err
	}
	fs.StringVar(&c.RateLimitStore, "rate-limit-store", store, "where rate-limit counts live: memory (this process) or redis://host:6379/0 shared by every instance (env PERISCOPE_RATE_LIMIT_STORE)")
	fs.DurationVar(&c.LeaseTTL, "lease-ttl", ttl, "lease time of background jobs on PostgreSQL: a dead instance's jobs move to another within 4/3 of it (env PERISCOPE_LEASE_TTL)")
	fs.IntVar(&c.AssetChangeLimit, "asset-change-limit", acl, "organization, asset and webhook endpoint changes and webhook tests per minute per account; 0 turns it off (env PERISCOPE_ASSET_CHANGE_LIMIT)")
	fs.IntVar(&c.WebhookLimit, "webhook-limit", wl, "webhook endpoints per organization, and so deliveries per alert; beyond it a creation is 403 quota_exceeded (env PERISCOPE_WEBHOOK_LIMIT)")
	fs.IntVar(&c.BrandWorkers, "brand-workers", bw, "goroutines computing the candidates of newly monitored domains (env PERISCOPE_BRAND_WORKERS)")
	for _, r := range strings.Split(getenv("PERISCOPE_DATABASE_REPLICA"), ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.Replicas = append(c.Replicas, r)
		}
	}
	fromEnv := len(c.Replicas) > 0
	fs.Func("database-replica", "postgres:// URL of a streaming replica of --database that serves read-only requests; repeat for several (env PERISCOPE_DATABASE_REPLICA, comma-separated)", func(v string) error {
		if fromEnv { // flags replace the environment's list
			c.Replicas, fromEnv = nil, false
		}
		c.Replicas = append(c.Replicas, strings.TrimSpace(v))
		return nil
	})
	lag, err := envDuration(getenv, "PERISCOPE_REPLICA_MAX_LAG", 5*time.Second)
	if err != nil {
		return err
	}
	fs.DurationVar(&c.ReplicaMaxLag, "replica-max-lag", lag, "a read replica further behind the primary than this is skipped until it catches up (env PERISCOPE_REPLICA_MAX_LAG)")
	return nil
}

func (c *Instances) validate() error {
	if c.RateLimitStore != "memory" && !strings.HasPrefix(c.RateLimitStore, "redis://") && !strings.HasPrefix(c.RateLimitStore, "rediss://") {
		return fmt.Errorf("--rate-limit-store must be memory or a redis:// or rediss:// URL (got %q)", c.RateLimitStore)
	}
	for _, r := range c.Replicas {
		if !strings.HasPrefix(r, "postgres://") && !strings.HasPrefix(r, "postgresql://") {
			return fmt.Errorf("--database-replica must be a postgres:// URL (got a value of %d characters)", len(r))
		}
	}
	if c.ReplicaMaxLag <= 0 {
		return fmt.Errorf("--replica-max-lag must be positive (got %s)", c.ReplicaMaxLag)
	}
	if c.LeaseTTL < 300*time.Millisecond {
		return fmt.Errorf("--lease-ttl must be at least 300ms (got %s)", c.LeaseTTL)
	}
	if c.AssetChangeLimit < 0 {
		return fmt.Errorf("--asset-change-limit must be >= 0")
	}
	if c.WebhookLimit < 1 {
		return fmt.Errorf("--webhook-limit must be >= 1")
	}
	if c.BrandWorkers < 1 {
		return fmt.Errorf("--brand-workers must be >= 1")
	}
	return nil
}
