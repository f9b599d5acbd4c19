-- The crawler tables' text keys compare byte by byte (collation "C"). Under the database's default
-- collation (C.UTF-8 here, en_US.UTF-8 elsewhere) every comparison of a record key, path or bot name in
-- their indexes, upserts, sorts and joins went through the C library's strcoll on copies of both
-- strings; bytewise it is a memcmp. Measured in process on 50,000 heavy-mix hits (docs/performance.md):
-- PostgreSQL's CPU a delivery about 6% less, a dashboard read about 12% less, a pages list about 18% less.
-- Under C.UTF-8 the order is the same (code points); under another locale paths and bot names now sort
-- by code point, as the page spans' by-hits indexes already did. Every column of these tables that is
-- compared with another of them changes together, so no comparison mixes two collations.
-- The two views over them (0026) go and come back as they were: their definitions are kept meanwhile.
create temp table crawler_views_kept on commit drop as
select name, rtrim(pg_get_viewdef(name::regclass), '; ' || chr(10)) as definition
from (values ('crawler_rollup_exact'), ('crawler_daily_exact')) as v(name);
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

do $$
declare kept record;
begin
  for kept in select name, definition from crawler_views_kept loop
    execute format('create view %I as %s', kept.name, kept.definition);
  end loop;
end $$;
