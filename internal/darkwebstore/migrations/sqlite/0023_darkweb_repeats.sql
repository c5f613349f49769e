-- The emails of an email domain that have more than one record under it
-- (darkwebstore listing.go): k is the domain's listing key (code 18), x
-- the email's search key. A discovered-emails page reads the records of
-- these emails by their key; every other email of the page has one
-- record, the one its listing row names, and is answered from it. The
-- index build adds to it as it adds index rows; here it is filled from
-- the index already stored (code 18 keys: from 18 << 56 to 19 << 56).
CREATE TABLE IF NOT EXISTS darkweb.darkweb_repeats (
    k INTEGER NOT NULL,
    x INTEGER NOT NULL,
    PRIMARY KEY (k, x)
) WITHOUT ROWID;

INSERT INTO darkweb.darkweb_repeats (k, x)
    SELECT k, x FROM darkweb.darkweb_index
    WHERE k >= 1297036692682702848 AND k < 1369094286720630784 AND x IS NOT NULL
    GROUP BY k, x HAVING COUNT(*) > 1
    ON CONFLICT (k, x) DO NOTHING;
