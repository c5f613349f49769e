-- An unfiltered listing counted its findings by walking every entry of the
-- listing index for (account, kind): 50,000 entries for 50,000 findings,
-- most of a page's time. brand_finding_counts keeps the count per base
-- domain, so the count reads one row per monitored base domain and still
-- applies the other-account claim filter, which depends on the base domain
-- alone. A trigger keeps it in the same statement as the finding
-- (insert, delete, and a cascade from a deleted organization).
CREATE TABLE brand_finding_counts (
    account_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    base_domain TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (account_id, kind, base_domain)
);
INSERT INTO brand_finding_counts (account_id, kind, base_domain, n)
    SELECT account_id, kind, base_domain, COUNT(*) FROM brand_findings GROUP BY account_id, kind, base_domain;

CREATE FUNCTION brand_finding_count() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE brand_finding_counts SET n = n - 1
            WHERE account_id = OLD.account_id AND kind = OLD.kind AND base_domain = OLD.base_domain;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO brand_finding_counts (account_id, kind, base_domain, n) VALUES (NEW.account_id, NEW.kind, NEW.base_domain, 1)
            ON CONFLICT (account_id, kind, base_domain) DO UPDATE SET n = brand_finding_counts.n + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER brand_finding_count AFTER INSERT OR DELETE OR UPDATE OF account_id, kind, base_domain ON brand_findings
    FOR EACH ROW EXECUTE FUNCTION brand_finding_count();
