-- An unfiltered listing counted its findings by walking every entry of the
-- listing index for (account, kind): 50,000 entries for 50,000 findings,
-- most of a page's time. brand_finding_counts keeps the count per base
-- domain, so the count reads one row per monitored base domain and still
-- applies the other-account claim filter, which depends on the base domain
-- alone. Triggers keep it in the same statement as the finding (insert,
-- delete, and a cascade from a deleted organization).
CREATE TABLE brand_finding_counts (
    account_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    base_domain TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (account_id, kind, base_domain)
) WITHOUT ROWID;
INSERT INTO brand_finding_counts (account_id, kind, base_domain, n)
    SELECT account_id, kind, base_domain, COUNT(*) FROM brand_findings GROUP BY account_id, kind, base_domain;
CREATE TRIGGER brand_finding_count_insert AFTER INSERT ON brand_findings BEGIN
    INSERT INTO brand_finding_counts (account_id, kind, base_domain, n) VALUES (new.account_id, new.kind, new.base_domain, 1)
        ON CONFLICT (account_id, kind, base_domain) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER brand_finding_count_delete AFTER DELETE ON brand_findings BEGIN
    UPDATE brand_finding_counts SET n = n - 1
        WHERE account_id = old.account_id AND kind = old.kind AND base_domain = old.base_domain;
END;
CREATE TRIGGER brand_finding_count_update AFTER UPDATE OF account_id, kind, base_domain ON brand_findings BEGIN
    UPDATE brand_finding_counts SET n = n - 1
        WHERE account_id = old.account_id AND kind = old.kind AND base_domain = old.base_domain;
    INSERT INTO brand_finding_counts (account_id, kind, base_domain, n) VALUES (new.account_id, new.kind, new.base_domain, 1)
        ON CONFLICT (account_id, kind, base_domain) DO UPDATE SET n = n + 1;
END;
