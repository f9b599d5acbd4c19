-- Server-log ingestion: crawler hits, their rollup, AI referrals. docs/agents.md.

-- One row per recognised AI-crawler request. The primary key is the delivery key of the record:
-- the platform's record id when the drain gives one, else "<delivery id>:<index>"; replays of a
-- spooled delivery and platform redeliveries therefore never store a hit twice.
create table crawler_hits (
  brand_id integer not null references brands (id) on delete cascade,
  record_key text not null,
  account_id bigint not null references accounts (id) on delete cascade,
  ts timestamptz not null,
  bot text not null,
  vendor text not null,
  kind text not null,
  host text not null default '',
  path text not null,
  query text not null default '',
  method text not null default 'GET',
  status smallint,                -- null: no status (the drain's -1 sentinel, or not given)
  client_ip text,                 -- null when hidden or not given
  country text,                   -- ISO-3166-1 alpha-2, null when not given
  referrer text not null default '',
  channel text not null,          -- edge_worker, cdn_webhook, csv_upload, api, drain, tag
  primary key (brand_id, record_key)
);
-- The agent reads (a brand's hits over a time window) and the retention sweep.
create index crawler_hits_brand_ts on crawler_hits (brand_id, ts);

-- Hit counts per (brand, day UTC, path, bot, status), written in the same transaction as the hits.
-- vendor and kind are the bot's (catalog) and stored beside it so vendor/kind filters need no join.
create table crawler_rollup (
  brand_id integer not null references brands (id) on delete cascade,
  day date not null,
  path text not null,
  bot text not null,
  status smallint,
  account_id bigint not null references accounts (id) on delete cascade,
  vendor text not null,
  kind text not null,
  hits integer not null,
  constraint crawler_rollup_key unique nulls not distinct (brand_id, day, path, bot, status)
);
create index crawler_rollup_brand_day_bot on crawler_rollup (brand_id, day, bot);

-- Requests of people (not crawlers) whose referrer is an answer engine. Not counted against the cap.
create table ai_referrals (
  brand_id integer not null references brands (id) on delete cascade,
  record_key text not null,
  account_id bigint not null references accounts (id) on delete cascade,
  ts timestamptz not null,
  engine text not null,           -- one of the engine slugs (docs/decisions.md)
  referrer text not null,
  host text not null default '',
  path text not null,
  query text not null default '',
  method text not null default 'GET',
  status smallint,
  client_ip text,
  country text,
  channel text not null,
  primary key (brand_id, record_key)
);
create index ai_referrals_brand_ts on ai_referrals (brand_id, ts);

-- Brands are looked up by site_id on every delivery: site_id is already unique (indexed) in 0001.
