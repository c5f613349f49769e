package config

import (
	"flag"
	"io"
	"testing"
)

func TestOutbound(t *testing.T) {
	parse := func(env map[string]string, args ...string) (Config, error) {
		var c Config
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if err := c.RegisterOutbound(fs, func(k string) string { return env[k] }); err != nil {
			return c, err
		}
		if err := fs.Parse(args); err != nil {
			return c, err
		}
		return c, c.ValidateOutbound()
	}
	c, err := parse(nil)
	if err != nil || c.Outbound.AllowPrivateTargets || c.Outbound.WhoisRate != 30 {
		t.Fatalf("defaults %+v %v", c.Outbound, err)
	}
	c, err = parse(map[string]string{"PERISCOPE_ALLOW_PRIVATE_TARGETS": "true", "PERISCOPE_WHOIS_RATE": "6"}, "--whois-servers", "s.txt")
	if err != nil || !c.Outbound.AllowPrivateTargets || c.Outbound.WhoisRate != 6 || c.Outbound.WhoisServers != "s.txt" {
		t.Fatalf("env and flags %+v %v", c.Outbound, err)
	}
	if _, err := parse(nil, "--whois-rate", "0"); err == nil {
		t.Fatal("zero rate accepted")
	}
	if _, err := parse(map[string]string{"PERISCOPE_ALLOW_PRIVATE_TARGETS": "maybe"}); err == nil {
		t.Fatal("bad boolean accepted")
	}
}
