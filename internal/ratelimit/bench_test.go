package ratelimit

import (
	"fmt"
	"testing"
)

// BenchmarkAllow is the cost a request pays for its per-key limit: in
// process, and as one round trip to the Redis of PERISCOPE_TEST_REDIS.
func BenchmarkAllow(b *testing.B) {
	run := func(b *testing.B, c Counter) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				c.Allow(fmt.Sprintf("key-%d|general", i%1000), 1<<30)
				i++
			}
		})
	}
	b.Run("memory", func(b *testing.B) { run(b, New()) })
	b.Run("redis", func(b *testing.B) { run(b, openRedis(b)) })
}
