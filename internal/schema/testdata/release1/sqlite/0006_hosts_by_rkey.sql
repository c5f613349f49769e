-- Host names are looked up through the reversed-label index (hosts_rkey:
-- the key is the name with its labels reversed, one per name), so the name
-- index goes: one index fewer to update per stored host. Names stay
-- unique because the hosts' writers take turns and insert only names the
-- reversed-label index does not hold (store.insertHostRows).
DROP INDEX hosts_name;
