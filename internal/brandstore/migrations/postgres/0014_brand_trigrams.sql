-- A substring filter (the q of the typosquatting and potential-phishing
-- listings: domain or base_domain LIKE '%q%') read every entry of the
-- listing index to count its matches. Trigram indexes (pg_trgm) answer it
-- from the few rows whose names hold q's trigrams. The extension is
-- database-wide: it is created once, in public, unless it is already there
-- (in whatever schema), and the operator class is named with that schema so
-- a search_path without it still finds it.
DO $$
DECLARE
    ext_schema text;
BEGIN
    SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
    IF ext_schema IS NULL THEN
        CREATE EXTENSION pg_trgm SCHEMA public;
        ext_schema := 'public';
    END IF;
    EXECUTE format('CREATE INDEX brand_findings_domain_trgm ON brand_findings USING gin (domain %I.gin_trgm_ops)', ext_schema);
    EXECUTE format('CREATE INDEX brand_findings_base_trgm ON brand_findings USING gin (base_domain %I.gin_trgm_ops)', ext_schema);
END
$$;
