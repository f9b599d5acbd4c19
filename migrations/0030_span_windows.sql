-- Agent analytics, the spans with one row per (path, bot) (docs/agents.md). A (path, bot)'s 7-, 30- and
-- 90-day windows were three rows of crawler_span, so every folded hit of today updated three rows. Now
-- the windows are columns of one row, as crawler_page_span's are (0029): a hit of today updates one. A
-- window's columns are 0 (hits, oks, errors) and null (times) where the (path, bot) has no hit in it; a
-- window's rows are those with hits_N > 0, and a row with no hit in the 90 days (the longest window,
-- holding the others) is not kept.
create temporary table span_windows on commit drop as
select account_id, brand_id, path, bot, min(vendor) as vendor, min(kind) as kind,
       coalesce(sum(hits) filter (where span = 7), 0) as hits_7,
       coalesce(sum(oks) filter (where span = 7), 0) as oks_7,
       coalesce(sum(errors) filter (where span = 7), 0) as errors_7,
       max(last_seen) filter (where span = 7) as last_seen_7,
       max(last_ok) filter (where span = 7) as last_ok_7,
       max(last_error) filter (where span = 7) as last_error_7,
       coalesce(sum(hits) filter (where span = 30), 0) as hits_30,
       coalesce(sum(oks) filter (where span = 30), 0) as oks_30,
       coalesce(sum(errors) filter (where span = 30), 0) as errors_30,
       max(last_seen) filter (where span = 30) as last_seen_30,
       max(last_ok) filter (where span = 30) as last_ok_30,
       max(last_error) filter (where span = 30) as last_error_30,
       coalesce(sum(hits) filter (where span = 90), 0) as hits_90,
       coalesce(sum(oks) filter (where span = 90), 0) as oks_90,
       coalesce(sum(errors) filter (where span = 90), 0) as errors_90,
       max(last_seen) filter (where span = 90) as last_seen_90,
       max(last_ok) filter (where span = 90) as last_ok_90,
       max(last_error) filter (where span = 90) as last_error_90
from crawler_span group by account_id, brand_id, path, bot;

drop table crawler_span;

create table crawler_span (
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null,
  path text not null,
  bot text not null,
  vendor text not null,
  kind text not null,
  hits_7 integer not null default 0,
  oks_7 integer not null default 0,
  errors_7 integer not null default 0,
  last_seen_7 timestamptz,
  last_ok_7 timestamptz,
  last_error_7 timestamptz,
  hits_30 integer not null default 0,
  oks_30 integer not null default 0,
  errors_30 integer not null default 0,
  last_seen_30 timestamptz,
  last_ok_30 timestamptz,
  last_error_30 timestamptz,
  hits_90 integer not null default 0,
  oks_90 integer not null default 0,
  errors_90 integer not null default 0,
  last_seen_90 timestamptz,
  last_ok_90 timestamptz,
  last_error_90 timestamptz,
  primary key (account_id, brand_id, path, bot),
  constraint crawler_span_brand_fkey foreign key (account_id, brand_id) references brands (account_id, id) on delete cascade
) with (fillfactor = 70);

insert into crawler_span (account_id, brand_id, path, bot, vendor, kind, hits_7, oks_7, errors_7, last_seen_7, last_ok_7, last_error_7, hits_30, oks_30, errors_30, last_seen_30, last_ok_30, last_error_30, hits_90, oks_90, errors_90, last_seen_90, last_ok_90, last_error_90)
select * from span_windows;

-- A bot-filtered list finds the bot's rows by key: the window is no longer a key prefix, so it would
-- otherwise read every row of the brand's 90 days. Its columns never change, so updates stay HOT.
create index crawler_span_by_bot on crawler_span (account_id, brand_id, bot, path);
