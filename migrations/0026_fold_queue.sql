-- Crawler hits fold into the rollups in the background (docs/performance.md, "The rollup aggregator").
-- A delivery appends its new hits to crawler_hits and to this queue, nothing else; the aggregator
-- deletes a batch of queue rows and adds them to crawler_rollup, crawler_daily, crawler_span and
-- crawler_page_span in one transaction, so a hit is in the queue or in the rollups, never both and
-- never neither. Every read adds the brand's queue rows to the rollup rows it reads.
create table crawler_fold_queue (
  account_id bigint not null,
  brand_id integer not null,
  record_key text not null,
  ts timestamptz not null,
  path text not null,
  bot text not null,
  vendor text not null,
  kind text not null,
  status smallint,
  verification text not null,
  -- The hit's key (crawler_hits'): reads find a brand's rows by its prefix, the verdict pass a hit by all of it.
  primary key (account_id, brand_id, record_key, ts)
);
-- No foreign key to brands: a check per appended row on the hot path. The aggregator drops the rows
-- of a brand deleted meanwhile.
-- Rows live for a fraction of a second: vacuum it often, so the aggregator's scans stay short.
alter table crawler_fold_queue set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
                                    autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);

-- The rollups as a read sees them: the folded rows and the queue's, one row per key. For SQL by hand
-- (and tests); the service's reads build the same union per query (src/agents/Repo.ts, live*).
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
