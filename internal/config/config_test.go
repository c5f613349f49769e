package config

import (
	"flag"
	"io"
	"testing"
	"time"
)

func parse(t *testing.T, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	var c Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	getenv := func(k string) string { return env[k] }
	c.Register(fs, getenv)
	if err := c.RegisterServe(fs, getenv); err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestDefaultsEnvironmentAndFlags(t *testing.T) {
	c, err := parse(t, nil)
	if err != nil || c.Database != "./periscope.db" || c.Addr != "127.0.0.1:8080" || c.RateLimit != 60 || c.SyncInterval != 0 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	env := map[string]string{"PERISCOPE_DATABASE": "postgres://x/y", "PERISCOPE_ADDR": ":9", "PERISCOPE_RATE_LIMIT": "0", "PERISCOPE_SYNC_INTERVAL": "6h"}
	c, err = parse(t, env)
	if err != nil || c.Database != "postgres://x/y" || c.Addr != ":9" || c.RateLimit != 0 || c.SyncInterval != 6*time.Hour {
		t.Fatalf("environment: %+v %v", c, err)
	}
	c, err = parse(t, env, "--database", "a.db", "--rate-limit", "5")
	if err != nil || c.Database != "a.db" || c.RateLimit != 5 {
		t.Fatalf("flags over environment: %+v %v", c, err)
	}
}

func TestPostingCacheMiB(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want int
	}{
		{"", nil, DefaultPostingCacheMiB},
		{"64", nil, 64},
		{"0", nil, 0},
		{"64", []string{"--posting-cache-mib", "1024"}, 1024},
		{"", []string{"--posting-cache-mib", "0"}, 0},
		{"", []string{"--posting-cache-mib", "1048576"}, MaxPostingCacheMiB},
	} {
		c, err := parse(t, map[string]string{"PERISCOPE_POSTING_CACHE_MIB": tc.env}, tc.args...)
		if err != nil || c.PostingCacheMiB != tc.want {
			t.Errorf("env %q, flags %v: %d %v, want %d", tc.env, tc.args, c.PostingCacheMiB, err, tc.want)
		}
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--posting-cache-mib", "-1"}, "--posting-cache-mib must be >= 0; 0 turns the cache off (got -1)"},
		{"", []string{"--posting-cache-mib", "268435456"}, "--posting-cache-mib is in MiB: 268435456 MiB is more than 1 TiB (at most 1048576)"},
		{"-5", nil, "--posting-cache-mib must be >= 0; 0 turns the cache off (got -5)"},
		{"256MiB", nil, `PERISCOPE_POSTING_CACHE_MIB must be an integer (got "256MiB")`},
	} {
		_, err := parse(t, map[string]string{"PERISCOPE_POSTING_CACHE_MIB": tc.env}, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("env %q, flags %v: %v, want %s", tc.env, tc.args, err, tc.want)
		}
	}
	if _, err := parse(t, nil, "--posting-cache-mib", "lots"); err == nil {
		t.Error("--posting-cache-mib lots accepted")
	}
}

func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"PERISCOPE_RATE_LIMIT": "many"}, nil},
		{map[string]string{"PERISCOPE_SYNC_INTERVAL": "daily"}, nil},
		{nil, []string{"--rate-limit", "-1"}},
		{nil, []string{"--log-level", "loud"}},
		{nil, []string{"--database", ""}},
	} {
		if _, err := parse(t, tc.env, tc.args...); err == nil {
			t.Errorf("%v %v: want an error", tc.env, tc.args)
		}
	}
}

func TestReplicaFlags(t *testing.T) {
	c, err := parse(t, map[string]string{"PERISCOPE_DATABASE_REPLICA": "postgres://a/x, postgres://b/x"})
	if err != nil || len(c.Instances.Replicas) != 2 || c.Instances.Replicas[1] != "postgres://b/x" || c.Instances.ReplicaMaxLag != 5*time.Second {
		t.Fatalf("environment: %+v %v", c.Instances, err)
	}
	c, err = parse(t, map[string]string{"PERISCOPE_DATABASE_REPLICA": "postgres://a/x"},
		"--database-replica", "postgres://c/x", "--database-replica", "postgres://d/x", "--replica-max-lag", "2s")
	if err != nil || len(c.Instances.Replicas) != 2 || c.Instances.Replicas[0] != "postgres://c/x" || c.Instances.ReplicaMaxLag != 2*time.Second {
		t.Fatalf("flags replace the environment: %+v %v", c.Instances, err)
	}
	if _, err := parse(t, nil, "--database-replica", "replica.db"); err == nil {
		t.Fatal("a SQLite replica was accepted")
	}
	if _, err := parse(t, nil, "--database-replica", "postgres://a/x", "--replica-max-lag", "0s"); err == nil {
		t.Fatal("a zero maximum lag was accepted")
	}
}
