-- Agent analytics: the read side of crawler traffic. docs/agents.md.
-- Every crawler aggregate reads a rollup, never the raw hits (docs/agents.md).

-- Time of the latest hit of each rollup row: the crawled-pages list shows it (last_seen).
alter table crawler_rollup add column last_seen timestamptz;
update crawler_rollup r set last_seen = coalesce(
  (select max(h.ts) from crawler_hits h
   where h.brand_id = r.brand_id and h.path = r.path and h.bot = r.bot and h.status is not distinct from r.status
     and h.ts >= r.day::timestamp at time zone 'UTC' and h.ts < (r.day + 1)::timestamp at time zone 'UTC'),
  r.day::timestamp at time zone 'UTC');
alter table crawler_rollup alter column last_seen set not null;

-- Hit counts per (brand, day UTC, bot, status): the rollup without the path. KPIs, trend and the
-- breakdowns of /agents, the funnel of /search-performance and the crawler hits of /attribution read
-- it (90 days x bots x statuses: a few thousand rows). Written by the ingestion statement.
create table crawler_daily (
  brand_id integer not null references brands (id) on delete cascade,
  day date not null,
  bot text not null,
  status smallint,
  account_id bigint not null references accounts (id) on delete cascade,
  vendor text not null,
  kind text not null,
  hits integer not null,
  constraint crawler_daily_key unique nulls not distinct (brand_id, day, bot, status)
);
insert into crawler_daily (brand_id, day, bot, status, account_id, vendor, kind, hits)
select brand_id, day, bot, status, min(account_id), min(vendor), min(kind), sum(hits)::int
from crawler_rollup group by brand_id, day, bot, status;

-- Per-(path, bot) totals of the last 7, 30 and 90 days ending crawler_span_state.as_of (UTC), so a
-- 90-day pages list aggregates one row per (path, bot) instead of one per (day, path, bot, status).
-- Rebuilt from crawler_rollup when the day changes; between rebuilds the ingestion statement adds
-- the hits it stores (under a share lock of the state row; a rebuild holds it exclusively).
create table crawler_span_state (
  brand_id integer primary key references brands (id) on delete cascade,
  as_of date
);
create table crawler_span (
  brand_id integer not null references brands (id) on delete cascade,
  span smallint not null,         -- 7, 30 or 90 days
  path text not null,
  bot text not null,
  account_id bigint not null references accounts (id) on delete cascade,
  vendor text not null,
  kind text not null,
  hits integer not null,          -- every status
  oks integer not null,           -- status 200-399
  errors integer not null,        -- status >= 400
  last_seen timestamptz not null,
  last_ok timestamptz,
  last_error timestamptz,
  primary key (brand_id, span, path, bot)
);
