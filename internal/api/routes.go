package api

// registerRoutes is the whole API map. Policies (route.go) decide
// authentication, entitlement, credits and rate-limit family.
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
	s.handle("POST /api/v1/enterprise/organizations", enterprise, s.handleCreateOrganization)
	s.handle("GET /api/v1/enterprise/organizations", enterprise, s.handleListOrganizations)
	s.handle("GET /api/v1/enterprise/organizations/{org_id}", enterprise, s.handleGetOrganization)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}", enterprise, s.handleDeleteOrganization)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/domains", enterprise, s.addAsset("dns"))
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}/domains", enterprise, s.removeAsset("dns"))
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/ip-ranges", enterprise, s.addAsset("ip-range"))
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}/ip-ranges", enterprise, s.removeAsset("ip-range"))

	// OEM account (§4.7).
	s.handle("POST /api/v1/oem/account/audit-logs", oemAuditLimit, s.handleAuditLogs)
	s.handle("POST /api/v1/oem/account/credits", oemFree, s.handleOEMCredits)

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
	s.handle("GET /api/v1/domain/{domain}/subdomains", charged, s.handleSubdomains)
	s.handle("GET /api/v1/domain/{domain}/details", charged, s.handleDomainDetails)
	s.handle("GET /api/v1/host/{host}", charged, s.handleHost)
	s.handle("POST /api/v1/oem/attack-surface/search", oemCharged, s.handleAttackSurfaceSearch)
	s.handle("POST /api/v1/oem/attack-surface/host", oemCharged, s.handleAttackSurfaceHost)
	// <routes:brand>
	s.handle("GET /api/v1/enterprise/darkweb/potential-phishing", enterprise, s.findingsListing(kindPhishing, phishingPageSize))
	s.handle("GET /api/v1/enterprise/darkweb/typosquatting", enterprise, s.findingsListing(kindTypo, typoPageSize))
	s.handle("GET /api/v1/enterprise/certificates", enterprise, s.handleCertificates)
	s.handle("POST /api/v1/oem/potential-phishing/search", oemCharged, s.brandSearch(kindPhishing, "potential_phishing_domains"))
	s.handle("POST /api/v1/oem/typosquatting/search", oemCharged, s.brandSearch(kindTypo, "typosquatting_domains"))
	// <routes:darkweb>
	s.handle("POST /api/v1/oem/darkweb/search", oemCharged, s.handleDarkwebSearch)
	s.handle("GET /api/v1/enterprise/darkweb/compromised-credentials", enterprise, s.handleCompromisedCredentials)
	s.handle("GET /api/v1/enterprise/darkweb/discovered-emails", enterprise, s.handleDiscoveredEmails)
}
