-- Agent analytics, the pages list without a crawler filter. docs/agents.md.
-- Per-path totals of the 7, 30 and 90 days ending crawler_span_state.as_of: crawler_span summed over
-- its bots, so a list without a bot/vendor/kind filter reads one row per path (a few thousand)
-- instead of one per (path, bot). Rebuilt from crawler_span whenever the spans move to a new day;
-- between moves the ingestion statement adds the hits it stores, under the same share lock of the
-- state row. uniques = the number of crawler_span rows of the path (distinct bots), ok_uniques /
-- error_uniques = those with oks > 0 / errors > 0; ingestion raises them when its span upsert makes
-- a row (or its oks, its errors) go from zero to non-zero.
create table crawler_page_span (
  brand_id integer not null references brands (id) on delete cascade,
  span smallint not null,         -- 7, 30 or 90 days
  path text not null,
  account_id bigint not null references accounts (id) on delete cascade,
  hits integer not null,          -- every status
  oks integer not null,           -- status 200-399
  errors integer not null,        -- status >= 400
  uniques integer not null,       -- distinct bots
  ok_uniques integer not null,    -- distinct bots with status 200-399
  error_uniques integer not null, -- distinct bots with status >= 400
  last_seen timestamptz not null,
  last_ok timestamptz,
  last_error timestamptz,
  primary key (brand_id, span, path)
);
insert into crawler_page_span (brand_id, span, path, account_id, hits, oks, errors, uniques, ok_uniques, error_uniques,
                               last_seen, last_ok, last_error)
select brand_id, span, path, min(account_id), sum(hits)::int, sum(oks)::int, sum(errors)::int, count(*)::int,
       (count(*) filter (where oks > 0))::int, (count(*) filter (where errors > 0))::int,
       max(last_seen), max(last_ok), max(last_error)
from crawler_span group by brand_id, span, path;

-- Rolling the windows to a new day updates tens of thousands of span rows in place (docs/agents.md),
-- and ingestion updates them all day: room on each page keeps those updates HOT (no index entries).
alter table crawler_span set (fillfactor = 70);
alter table crawler_page_span set (fillfactor = 70);
