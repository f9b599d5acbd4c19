-- The crawler tables' text keys compare byte by byte (collation "C"). Under the database's default
-- collation (C.UTF-8 here, en_US.UTF-8 elsewhere) every comparison of a record key, path or bot name in
-- their indexes, upserts, sorts and joins went through the C library's strcoll on copies of both
-- strings; bytewise it is a memcmp. Measured in process on 50,000 heavy-mix hits (docs/performance.md):
-- PostgreSQL's CPU a delivery about 6% less, a dashboard read about 12% less, a pages list about 18% less.
-- Under C.UTF-8 the order is the same (code points); under another locale paths and bot names now sort
-- by code point, as the page spans' by-hits indexes already did. Every column of these tables that is
-- compared with another of them changes together, so no comparison mixes two collations.
drop view crawler_rollup_exact;
drop view crawler_daily_exact;

alter table crawler_hits
  alter column record_key type text collate "C", alter column path type text collate "C",
  alter column bot type text collate "C", alter column vendor type text collate "C",
  alter column kind type text collate "C", alter column verification type text collate "C";
alter table crawler_fold_queue
  alter column record_key type text collate "C", alter column path type text collate "C",
  alter column bot type text collate "C", alter column vendor type text collate "C",
  alter column kind type text collate "C", alter column verification type text collate "C";
alter table crawler_rollup
  alter column path type text collate "C", alter column bot type text collate "C",
  alter column vendor type text collate "C", alter column kind type text collate "C",
  alter column verification type text collate "C";
alter table crawler_daily
  alter column bot type text collate "C", alter column vendor type text collate "C",
  alter column kind type text collate "C", alter column verification type text collate "C";
alter table crawler_span
  alter column path type text collate "C", alter column bot type text collate "C",
  alter column vendor type text collate "C", alter column kind type text collate "C";
alter table crawler_page_span alter column path type text collate "C";
alter table brand_bots_seen alter column bot type text collate "C";
alter table ai_referrals alter column record_key type text collate "C", alter column path type text collate "C";

-- As in 0026: the rollups as a read sees them, for SQL by hand and tests.
create view crawler_rollup_exact as
select account_id, brand_id, day, path, bot, status, verification, min(vendor) as vendor, min(kind) as kind,
       sum(hits)::int as hits, max(last_seen) as last_seen
from (
  select account_id, brand_id, day, path, bot, status, verification, vendor, kind, hits, last_seen from crawler_rollup
  union all
  select account_id, brand_id, (ts at time zone 'UTC')::date, path, bot, status, verification, vendor, kind, 1, ts
  from crawler_fold_queue
) r
group by account_id, brand_id, day, path, bot, status, verification;

create view crawler_daily_exact as
select account_id, brand_id, day, bot, status, verification, min(vendor) as vendor, min(kind) as kind, sum(hits)::int as hits
from (
  select account_id, brand_id, day, bot, status, verification, vendor, kind, hits from crawler_daily
  union all
  select account_id, brand_id, (ts at time zone 'UTC')::date, bot, status, verification, vendor, kind, 1
  from crawler_fold_queue
) d
group by account_id, brand_id, day, bot, status, verification;
