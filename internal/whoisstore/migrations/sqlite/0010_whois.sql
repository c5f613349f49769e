-- WHOIS and RDAP. One row per domain looked up or ingested: the parsed
-- fields as columns (so /oem/whois/search is an indexed query), the raw
-- port-43 text and the RDAP summary kept beside them. Times are Unix
-- seconds, 0 when unknown. *_lc columns hold the lower-cased value searched.
CREATE TABLE whois_records (
    domain TEXT PRIMARY KEY,
    tld TEXT NOT NULL,
    registrar TEXT NOT NULL DEFAULT '',
    registrar_lc TEXT NOT NULL DEFAULT '',
    registrar_iana_id TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL DEFAULT 0,
    statuses TEXT NOT NULL DEFAULT '[]',
    nameservers TEXT NOT NULL DEFAULT '[]',
    dnssec TEXT NOT NULL DEFAULT '',
    registrant_org TEXT NOT NULL DEFAULT '',
    registrant_org_lc TEXT NOT NULL DEFAULT '',
    registrant_email TEXT NOT NULL DEFAULT '',
    registrant_country TEXT NOT NULL DEFAULT '',
    whois_server TEXT NOT NULL DEFAULT '',
    whois_raw TEXT NOT NULL DEFAULT '',
    rdap_source TEXT NOT NULL DEFAULT '',
    rdap_json TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'lookup',
    not_found INTEGER NOT NULL DEFAULT 0,
    queried_at INTEGER NOT NULL,
    cache_expires INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX whois_records_tld ON whois_records (tld, domain);
CREATE INDEX whois_records_registrar ON whois_records (registrar_lc, domain);
CREATE INDEX whois_records_iana ON whois_records (registrar_iana_id) WHERE registrar_iana_id <> '';
CREATE INDEX whois_records_expires ON whois_records (expires_at) WHERE expires_at > 0;
CREATE INDEX whois_records_org ON whois_records (registrant_org_lc) WHERE registrant_org_lc <> '';
CREATE INDEX whois_records_email ON whois_records (registrant_email) WHERE registrant_email <> '';
CREATE INDEX whois_records_country ON whois_records (registrant_country) WHERE registrant_country <> '';

-- Name servers and statuses of each record, one row each, so "every domain
-- on ns1.example.net" is a key range. kind is 'ns' or 'status'; statuses
-- are folded (lower case, no spaces) so EPP and RDAP spellings meet.
CREATE TABLE whois_terms (
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    domain TEXT NOT NULL REFERENCES whois_records (domain) ON DELETE CASCADE,
    PRIMARY KEY (kind, value, domain)
) WITHOUT ROWID;
CREATE INDEX whois_terms_domain ON whois_terms (domain);

-- IANA's RDAP bootstrap registries (dns, ipv4, ipv6, asn) as last fetched.
CREATE TABLE rdap_bootstrap (
    kind TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    publication TEXT NOT NULL DEFAULT '',
    fetched_at INTEGER NOT NULL
);
