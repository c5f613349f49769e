package api

// registerRoutes is the whole API map. Policies (route.go) decide
// authentication, entitlement, credits and rate limit: every route is
// limited per key at FullHunt's general rate (60 a minute) unless its
// policy is limited(n) to the rate FullHunt documents for it (docs/api.md
// "Rate limits" gives the source of each).
func (s *Server) registerRoutes() {
	// Operations and documentation: no key.
	s.handle("GET /healthz", public, s.handleHealthz)
	s.handle("GET /readyz", public, s.handleReadyz)
	s.handle("GET /metrics", public, s.handleMetrics)
	s.handle("GET /api/v1/openapi.json", public, s.handleOpenAPI)
	s.handle("GET /docs", public, s.handleDocs)

	// Account (§4.1).
	s.handle("GET /api/v1/auth/status", free, s.handleAuthStatus)

	// Enterprise organizations and assets (§4.2).
	s.handle("POST /api/v1/enterprise/organizations", enterpriseChange, s.handleCreateOrganization)
	s.handle("GET /api/v1/enterprise/organizations", enterprise, s.handleListOrganizations)
	s.handle("GET /api/v1/enterprise/organizations/{org_id}", enterprise, s.handleGetOrganization)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}", enterpriseChange, s.handleDeleteOrganization)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/domains", enterpriseChange, s.handleAddDomain)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}/domains", enterpriseChange, s.handleRemoveDomain)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/ip-ranges", enterpriseChange, s.handleAddIPRange)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}/ip-ranges", enterpriseChange, s.handleRemoveIPRange)
	s.handle("PUT /api/v1/enterprise/organizations/{org_id}/domains/settings", enterpriseChange, s.handleDomainSettings)
	s.handle("PUT /api/v1/enterprise/organizations/{org_id}/ip-ranges/settings", enterpriseChange, s.handleIPRangeSettings)

	// OEM account (§4.7).
	s.handle("POST /api/v1/oem/account/audit-logs", oemFree.limited(15), s.handleAuditLogs)
	s.handle("POST /api/v1/oem/account/credits", oemFree.limited(30), s.handleOEMCredits)

	// Capabilities register below, one line per route.
	// <routes:vuln>
	s.registerVulnMetrics()
	s.handle("GET /api/v1/vulnerability-intelligence/feed", charged, s.handleVulnFeed)
	s.handle("GET /api/v1/vulnerability-intelligence/vulnerability-search", charged, s.handleVulnSearch)
	s.handle("POST /api/v1/vulnerability-intelligence/vulnerability-search", chargedForms, s.handleVulnSearch)
	s.handle("GET /api/v1/vulnerability-intelligence/advisories-search", charged, s.handleAdvisorySearch)
	s.handle("POST /api/v1/vulnerability-intelligence/advisories-search", chargedForms, s.handleAdvisorySearch)
	s.handle("GET /api/v1/vulnerability-intelligence/exploits-search", charged, s.handleExploitSearch)
	s.handle("POST /api/v1/vulnerability-intelligence/exploits-search", chargedForms, s.handleExploitSearch)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/feed", oemCharged, s.handleOEMVulnFeed)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/vulnerability-search", oemCharged, s.handleVulnSearch)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/advisories-search", oemCharged, s.handleAdvisorySearch)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/exploits-search", oemCharged, s.handleExploitSearch)
	// <routes:hosts>
	s.handle("POST /api/v1/global/search", charged, s.handleGlobalSearch)
	s.handle("GET /api/v1/hosts/search", charged, s.handleHostsSearch)
	s.handle("GET /api/v1/hosts/count", free, s.handleHostsCount)
	s.handle("GET /api/v1/hosts/export", chargedStream, s.handleHostsExport)
	s.handle("GET /api/v1/domain/{domain}/subdomains", charged, s.handleSubdomains)
	s.handle("GET /api/v1/domain/{domain}/details", charged, s.handleDomainDetails)
	s.handle("GET /api/v1/host/{host}", charged, s.handleHost)
	s.handle("POST /api/v1/oem/attack-surface/search", oemCharged, s.handleAttackSurfaceSearch)
	s.handle("POST /api/v1/oem/attack-surface/host", oemCharged, s.handleAttackSurfaceHost)
	// <routes:history> the change ledger read back (history.go).
	s.handle("GET /api/v1/host/{host}/history", charged, s.handleHostHistory)
	s.handle("GET /api/v1/host/{host}/diff", charged, s.handleHostDiff)
	s.handle("POST /api/v1/oem/historical-hosts/search", oemCharged, s.handleHistoricalHosts)
	// <routes:fidelity> FullHunt's routes over data we hold (intel.go, nexus.go, entities.go).
	s.handle("GET /api/v1/intel/{route_type}", charged, s.handleIntel)
	s.handle("GET /api/v1/enterprise/entities", enterprise, s.handleEntities)
	s.handle("GET /api/v1/enterprise/assets", enterprise, s.handleEntityAssets)
	s.handle("GET /api/v1/enterprise/suggested-domains", enterprise, s.handleSuggestedDomains)
	s.handle("GET /api/v1/nexus/ip-lookup", charged, s.handleIPLookup)
	s.handle("GET /api/v1/nexus/passive-dns/lookup", charged, s.handlePassiveDNS)
	s.handle("GET /api/v1/nexus/cloud-certs/dns-search", charged, s.handleCertDNSSearch)
	s.handle("GET /api/v1/public/my-ip", public, s.handleMyIP)
	s.handle("GET /api/v1/nexus/tor/check-ip", charged, s.handleTorCheckIP)
	s.handle("GET /api/v1/nexus/whois/lookup", charged, s.handleNexusWhoisLookup)
	s.handle("GET /api/v1/nexus/whois/search", charged, s.handleNexusWhoisSearch)
	s.handle("GET /api/v1/nexus/domain-collection/lookup", charged, s.handleDomainCollectionLookup)
	s.handle("GET /api/v1/nexus/domain-collection/company-lookup", charged, s.handleCompanyLookup)
	s.handle("GET /api/v1/organizations-db/search", charged, s.handleOrganizationsDB)
	s.handle("POST /api/v1/oem/organizations/search", oemCharged, s.handleOEMOrganizations)
	// <routes:brand>
	s.handle("GET /api/v1/enterprise/darkweb/potential-phishing", enterprise, s.handlePhishingFindings)
	s.handle("GET /api/v1/enterprise/darkweb/typosquatting", enterprise, s.handleTyposquattingFindings)
	s.handle("GET /api/v1/enterprise/certificates", enterprise, s.handleCertificates)
	s.handle("POST /api/v1/oem/potential-phishing/search", oemCharged, s.handlePhishingSearch)
	s.handle("POST /api/v1/oem/typosquatting/search", oemCharged, s.handleTyposquattingSearch)
	// <routes:whois>
	s.handle("POST /api/v1/oem/whois/lookup", oemSelfCharged, s.handleWhoisLookup)
	s.handle("POST /api/v1/oem/whois/search", oemCharged, s.handleWhoisSearch)
	// <routes:alerts>
	s.handle("POST /api/v1/oem/alerts/search", oemCharged, s.handleAlertSearch)
	s.handle("GET /api/v1/enterprise/alerts", enterprise, s.handleListAlerts)
	s.handle("GET /api/v1/enterprise/vulnerabilities", enterprise, s.handleEnterpriseVulnerabilities)
	s.handle("POST /api/v1/oem/vulnerabilities/search", oemCharged, s.handleOEMVulnerabilities)
	s.handle("POST /api/v1/enterprise/alerts/{id}/acknowledge", enterprise, s.handleAcknowledgeAlert)
	s.handle("POST /api/v1/enterprise/alerts/{id}/resolve", enterprise, s.handleResolveAlert)
	s.handle("POST /api/v1/enterprise/alerts/{id}/suppress", enterprise, s.handleSuppressAlert)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/webhooks", enterpriseChange, s.handleCreateWebhook)
	s.handle("GET /api/v1/enterprise/organizations/{org_id}/webhooks", enterprise, s.handleListWebhooks)
	s.handle("PATCH /api/v1/enterprise/organizations/{org_id}/webhooks/{webhook_id}", enterpriseChange, s.handleUpdateWebhook)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}/webhooks/{webhook_id}", enterprise, s.handleDeleteWebhook)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/webhooks/{webhook_id}/test", enterpriseChange, s.handleTestWebhook)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/webhooks/{webhook_id}/rotate-secret", enterprise, s.handleRotateWebhookSecret)
	// <routes:scans>
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/domains/verify", enterprise, s.handleVerifyDomain)
	s.handle("GET /api/v1/enterprise/on-demand-scans", enterpriseScan, s.handleOnDemandScan)
	s.handle("GET /api/v1/attack-surface/on-demand-scan", enterpriseScan, s.handleAttackSurfaceScan)
	s.handle("GET /api/v1/enterprise/on-demand-scans/scan-status", enterprise, s.handleScanStatus)
	s.handle("POST /api/v1/oem/on-demand-scan", oemSelfCharged, s.handleOEMOnDemandScan)
	s.handle("POST /api/v1/oem/on-demand-scan/scan-status", oemFree, s.handleOEMScanStatus)
	// <routes:mcp> FullHunt's agent interface (mcp.go, mcp_tools.go).
	s.handle("POST /api/v1/mcp", agent, s.handleMCP)
	// <routes:darkweb>
	s.handle("POST /api/v1/oem/darkweb/search", oemCharged, s.handleDarkwebSearch)
	s.handle("GET /api/v1/enterprise/darkweb/compromised-credentials", enterprise, s.handleCompromisedCredentials)
	s.handle("GET /api/v1/enterprise/darkweb/discovered-emails", enterprise, s.handleDiscoveredEmails)
}
