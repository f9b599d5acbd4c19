-- Agent analytics, the per-path spans with one row per path (docs/agents.md). A path's 7-, 30- and
-- 90-day windows were three rows of crawler_page_span, so every folded hit updated three rows (and,
-- their hits being indexed, three entries of each index). Now the windows are columns of one row: a
-- hit of today updates one. A window's columns are 0 (hits, counts) and null (times) where the path
-- has no hit in it; a window's rows are those with hits_N > 0, each window ordered by its own partial
-- index (the lists' default order: hits descending, then path in byte order). `entered` is written by
-- the aggregator's fold alone: which windows the row entered in that fold (1: 7 days, 2: 30, 4: 90),
-- for the windows' path counts (crawler_span_state.pages_N); it means nothing between folds.
create temporary table page_windows on commit drop as
select account_id, brand_id, path,
       coalesce(sum(hits) filter (where span = 7), 0) as hits_7,
       coalesce(sum(oks) filter (where span = 7), 0) as oks_7,
       coalesce(sum(errors) filter (where span = 7), 0) as errors_7,
       coalesce(sum(uniques) filter (where span = 7), 0) as uniques_7,
       coalesce(sum(ok_uniques) filter (where span = 7), 0) as ok_uniques_7,
       coalesce(sum(error_uniques) filter (where span = 7), 0) as error_uniques_7,
       max(last_seen) filter (where span = 7) as last_seen_7,
       max(last_ok) filter (where span = 7) as last_ok_7,
       max(last_error) filter (where span = 7) as last_error_7,
       coalesce(sum(hits) filter (where span = 30), 0) as hits_30,
       coalesce(sum(oks) filter (where span = 30), 0) as oks_30,
       coalesce(sum(errors) filter (where span = 30), 0) as errors_30,
       coalesce(sum(uniques) filter (where span = 30), 0) as uniques_30,
       coalesce(sum(ok_uniques) filter (where span = 30), 0) as ok_uniques_30,
       coalesce(sum(error_uniques) filter (where span = 30), 0) as error_uniques_30,
       max(last_seen) filter (where span = 30) as last_seen_30,
       max(last_ok) filter (where span = 30) as last_ok_30,
       max(last_error) filter (where span = 30) as last_error_30,
       coalesce(sum(hits) filter (where span = 90), 0) as hits_90,
       coalesce(sum(oks) filter (where span = 90), 0) as oks_90,
       coalesce(sum(errors) filter (where span = 90), 0) as errors_90,
       coalesce(sum(uniques) filter (where span = 90), 0) as uniques_90,
       coalesce(sum(ok_uniques) filter (where span = 90), 0) as ok_uniques_90,
       coalesce(sum(error_uniques) filter (where span = 90), 0) as error_uniques_90,
       max(last_seen) filter (where span = 90) as last_seen_90,
       max(last_ok) filter (where span = 90) as last_ok_90,
       max(last_error) filter (where span = 90) as last_error_90
from crawler_page_span group by account_id, brand_id, path;

drop table crawler_page_span;

create table crawler_page_span (
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null,
  path text not null,
  hits_7 integer not null default 0,
  oks_7 integer not null default 0,
  errors_7 integer not null default 0,
  uniques_7 integer not null default 0,
  ok_uniques_7 integer not null default 0,
  error_uniques_7 integer not null default 0,
  last_seen_7 timestamptz,
  last_ok_7 timestamptz,
  last_error_7 timestamptz,
  hits_30 integer not null default 0,
  oks_30 integer not null default 0,
  errors_30 integer not null default 0,
  uniques_30 integer not null default 0,
  ok_uniques_30 integer not null default 0,
  error_uniques_30 integer not null default 0,
  last_seen_30 timestamptz,
  last_ok_30 timestamptz,
  last_error_30 timestamptz,
  hits_90 integer not null default 0,
  oks_90 integer not null default 0,
  errors_90 integer not null default 0,
  uniques_90 integer not null default 0,
  ok_uniques_90 integer not null default 0,
  error_uniques_90 integer not null default 0,
  last_seen_90 timestamptz,
  last_ok_90 timestamptz,
  last_error_90 timestamptz,
  entered smallint not null default 0,
  primary key (account_id, brand_id, path),
  constraint crawler_page_span_brand_fkey foreign key (account_id, brand_id) references brands (account_id, id) on delete cascade
) with (fillfactor = 70);

insert into crawler_page_span (account_id, brand_id, path, hits_7, oks_7, errors_7, uniques_7, ok_uniques_7, error_uniques_7, last_seen_7, last_ok_7, last_error_7, hits_30, oks_30, errors_30, uniques_30, ok_uniques_30, error_uniques_30, last_seen_30, last_ok_30, last_error_30, hits_90, oks_90, errors_90, uniques_90, ok_uniques_90, error_uniques_90, last_seen_90, last_ok_90, last_error_90)
select * from page_windows;

create index crawler_page_span_by_hits_7 on crawler_page_span (account_id, brand_id, hits_7 desc, path collate "C") where hits_7 > 0;
create index crawler_page_span_by_hits_30 on crawler_page_span (account_id, brand_id, hits_30 desc, path collate "C") where hits_30 > 0;
create index crawler_page_span_by_hits_90 on crawler_page_span (account_id, brand_id, hits_90 desc, path collate "C") where hits_90 > 0;
