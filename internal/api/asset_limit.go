package api

import (
	"net/http"
)

// limitAssetChange holds a route that changes an account's organizations
// or their assets (policy enterpriseChange) to Config.AssetChangeLimit calls
// per minute per account (all keys of the account together): each change
// makes the brand watcher do work for the account, and quotas alone would
// let it churn add and remove forever. Every attempt counts, refused or not.
func (s *Server) limitAssetChange(r *http.Request) error {
	limit := s.cfg.AssetChangeLimit
	res := s.limiter.Allow("account:"+principalOf(r).Account.ID+"|asset-changes", limit)
	if !res.Allowed {
		s.metrics.rateLimited.WithLabelValues("asset-changes").Inc()
		return rateLimited(res.RetryAfter(s.now()),
			"Too many organization, asset and webhook changes: %d per minute for this account.", limit)
	}
	return nil
}
