-- A name under a domain that another account claims is that account's own
-- host, not a look-alike of anyone else's brand (issue 29): findings stored
-- for such names before the brand monitor left them out go, so the kept
-- counts (migration 15) count only what the listings show. The topmost
-- claim among the name and its parents decides, as in
-- store.NotClaimedByOther.
DELETE FROM brand_findings WHERE NOT COALESCE((WITH RECURSIVE up(n) AS (SELECT brand_findings.domain UNION ALL
        SELECT SUBSTR(n, INSTR(n, '.') + 1) FROM up WHERE INSTR(n, '.') > 0)
    SELECT c.account_id FROM up JOIN asset_claims c ON c.kind = 'dns' AND c.value = up.n
    ORDER BY LENGTH(up.n) LIMIT 1), brand_findings.account_id) = brand_findings.account_id;
