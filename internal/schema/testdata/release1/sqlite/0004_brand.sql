-- Brand protection. Certificates are stored once, keyed by the SHA-256 of
-- their DER; certificate_names maps every name a certificate covers (rname:
-- labels reversed, so "every name under acme.com" is one key range) to it.
CREATE TABLE certificates (
    id INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL,
    sha1 TEXT NOT NULL,
    subject_cn TEXT NOT NULL DEFAULT '',
    subject_org TEXT NOT NULL DEFAULT '',
    issuer_cn TEXT NOT NULL DEFAULT '',
    issuer_org TEXT NOT NULL DEFAULT '',
    serial TEXT NOT NULL DEFAULT '',
    not_before INTEGER NOT NULL,
    not_after INTEGER NOT NULL,
    dns_names TEXT NOT NULL DEFAULT '[]',
    ip_addresses TEXT NOT NULL DEFAULT '[]',
    is_precert INTEGER NOT NULL DEFAULT 0,
    signature_algorithm TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL
);
CREATE UNIQUE INDEX certificates_sha256 ON certificates (sha256);

CREATE TABLE certificate_names (
    rname TEXT NOT NULL,
    certificate_id INTEGER NOT NULL REFERENCES certificates (id) ON DELETE CASCADE,
    PRIMARY KEY (rname, certificate_id)
) WITHOUT ROWID;
CREATE INDEX certificate_names_cert ON certificate_names (certificate_id);

-- The certificates covering an organization's domains.
CREATE TABLE org_certificates (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    certificate_id INTEGER NOT NULL REFERENCES certificates (id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    date_added INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    PRIMARY KEY (organization_id, certificate_id)
);
CREATE INDEX org_certificates_list ON org_certificates (account_id, date_added DESC, certificate_id);

-- Typosquatting and potential-phishing findings of an organization's
-- monitored domains. Deleting the organization deletes them.
CREATE TABLE brand_findings (
    id INTEGER PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    domain TEXT NOT NULL,
    base_domain TEXT NOT NULL,
    fuzzer TEXT NOT NULL DEFAULT '',
    score INTEGER NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    dns TEXT NOT NULL DEFAULT '{}',
    dns_history TEXT NOT NULL DEFAULT '[]',
    date_added INTEGER NOT NULL,
    last_seen INTEGER NOT NULL
);
CREATE UNIQUE INDEX brand_findings_key ON brand_findings (organization_id, base_domain, domain);
-- Listing order; domain and base_domain make it covering, so the q filter
-- and the counts read the index alone.
CREATE INDEX brand_findings_list ON brand_findings (account_id, kind, score DESC, date_added DESC, id, domain, base_domain);
CREATE INDEX brand_findings_base ON brand_findings (base_domain, kind);
-- Matching looks up a batch of observed names at once.
CREATE INDEX brand_findings_domain ON brand_findings (domain);

-- Where each followed Certificate Transparency log resumes.
CREATE TABLE ct_checkpoints (
    log TEXT PRIMARY KEY,
    next_index INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- The monitored (organization, domain) pairs whose stored observations were
-- already matched, so a restart does not match them again; a row goes when
-- the domain leaves the organization.
CREATE TABLE brand_monitored (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    backfilled_at INTEGER NOT NULL,
    PRIMARY KEY (organization_id, domain)
);
