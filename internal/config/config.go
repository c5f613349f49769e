// Package config is the only reader of flags and environment variables. Each
// setting is a flag whose default comes from its PERISCOPE_* variable.
package config

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// Config is the service configuration shared by the subcommands.
type Config struct {
	Database        string        // SQLite file path or postgres:// URL
	Addr            string        // HTTP listen address
	RateLimit       int           // requests per minute per key; 0 = off
	AuthFailLimit   int           // failed authentications per minute per IP
	ShutdownTimeout time.Duration // how long in-flight requests get at shutdown
	LogLevel        string        // debug, info, warn, error
	Demo            bool          // serve: create demo accounts and load demo data
	// Feeds and enrichment, used by capabilities; empty means built-in defaults.
	GeoIPCity    string
	GeoIPASN     string
	CloudRanges  string
	SyncInterval time.Duration // 0 = no scheduled sync
	NVDAPIKey    string
	VulnSync     VulnSync // upstream feeds of the scheduled vulnerability sync
	Outbound     Outbound // connections made on a user's behalf (outbound.go)
}

// Getenv looks up an environment variable (os.Getenv, or a map in tests).
type Getenv func(string) string

// Register adds the common flags to fs, with defaults from the environment.
// Call Validate after fs.Parse.
func (c *Config) Register(fs *flag.FlagSet, getenv Getenv) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.Database, "database", env("PERISCOPE_DATABASE", "./periscope.db"), "SQLite file path or postgres:// URL (env PERISCOPE_DATABASE)")
	fs.StringVar(&c.LogLevel, "log-level", env("PERISCOPE_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env PERISCOPE_LOG_LEVEL)")
}

// RegisterServe adds the flags of the serve command.
func (c *Config) RegisterServe(fs *flag.FlagSet, getenv Getenv) error {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	rl, err := envInt(getenv, "PERISCOPE_RATE_LIMIT", 60)
	if err != nil {
		return err
	}
	afl, err := envInt(getenv, "PERISCOPE_AUTH_FAIL_LIMIT", 30)
	if err != nil {
		return err
	}
	sync, err := envDuration(getenv, "PERISCOPE_SYNC_INTERVAL", 0)
	if err != nil {
		return err
	}
	fs.StringVar(&c.Addr, "addr", env("PERISCOPE_ADDR", "127.0.0.1:8080"), "listen address (env PERISCOPE_ADDR)")
	fs.IntVar(&c.RateLimit, "rate-limit", rl, "requests per minute per key and route family; 0 turns it off (env PERISCOPE_RATE_LIMIT)")
	fs.IntVar(&c.AuthFailLimit, "auth-fail-limit", afl, "failed authentications per minute per client IP (env PERISCOPE_AUTH_FAIL_LIMIT)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "time given to in-flight requests at shutdown")
	fs.BoolVar(&c.Demo, "demo", false, "create the demo accounts (printing their keys) and load the bundled demo data")
	fs.StringVar(&c.GeoIPCity, "geoip-city", env("PERISCOPE_GEOIP_CITY", ""), "MMDB file with city/country data (MaxMind, DB-IP or IPinfo layout) (env PERISCOPE_GEOIP_CITY)")
	fs.StringVar(&c.GeoIPASN, "geoip-asn", env("PERISCOPE_GEOIP_ASN", ""), "MMDB file with ASN data (env PERISCOPE_GEOIP_ASN)")
	fs.StringVar(&c.CloudRanges, "cloud-ranges", env("PERISCOPE_CLOUD_RANGES", ""), "directory of provider range files overriding the built-in set (env PERISCOPE_CLOUD_RANGES)")
	fs.DurationVar(&c.SyncInterval, "sync-interval", sync, "how often to sync the vulnerability feeds from upstream; 0 disables (env PERISCOPE_SYNC_INTERVAL)")
	fs.StringVar(&c.NVDAPIKey, "nvd-api-key", env("PERISCOPE_NVD_API_KEY", ""), "NVD API key, sent as the apiKey header (env PERISCOPE_NVD_API_KEY)")
	c.VulnSync.register(fs, getenv)
	return nil
}

// Validate checks the parsed values.
func (c *Config) Validate() error {
	if c.Database == "" {
		return fmt.Errorf("--database must not be empty")
	}
	if c.RateLimit < 0 || c.AuthFailLimit < 0 {
		return fmt.Errorf("--rate-limit and --auth-fail-limit must be >= 0")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	if c.SyncInterval < 0 {
		return fmt.Errorf("--sync-interval must be >= 0")
	}
	return nil
}

func envInt(getenv Getenv, name string, def int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s must be an integer (got %q)", name, v)
	}
	return n, nil
}

func envDuration(getenv Getenv, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s must be a duration such as 6h (got %q)", name, v)
	}
	return d, nil
}
