-- Scale-out (docs/scale.md): every account-owned table keyed by account first, so a distributed
-- PostgreSQL (Citus) can shard each by account_id without changing a key; the raw crawler hits and
-- the AI referrals partitioned by time, so retention drops whole partitions instead of deleting rows.

-- 1. Foreign keys between account-owned tables are dropped here and made again with account_id below.
do $$
declare r record;
begin
  for r in
    select conrelid::regclass::text as tbl, conname from pg_constraint
    where contype = 'f'
      and confrelid in ('brands'::regclass, 'competitors'::regclass, 'prompts'::regclass, 'observations'::regclass,
                        'fanouts'::regclass, 'webhook_endpoints'::regclass, 'webhook_events'::regclass,
                        'webhook_deliveries'::regclass)
  loop
    execute format('alter table %s drop constraint %I', r.tbl, r.conname);
  end loop;
end $$;

-- 2. The tables that only had brand_id (or delivery_id) gain account_id, from their parent.
alter table crawler_span_state add column account_id bigint;
update crawler_span_state s set account_id = b.account_id from brands b where b.id = s.brand_id;
alter table crawler_span_state alter column account_id set not null;

alter table brand_bots_seen add column account_id bigint;
update brand_bots_seen s set account_id = b.account_id from brands b where b.id = s.brand_id;
alter table brand_bots_seen alter column account_id set not null;

alter table webhook_attempts add column account_id bigint;
update webhook_attempts a set account_id = d.account_id from webhook_deliveries d where d.id = a.delivery_id;
alter table webhook_attempts alter column account_id set not null;

-- 3. Primary keys and unique constraints lead with account_id (constraint names kept: the code names some).
alter table brands drop constraint brands_pkey, add primary key (account_id, id);
-- site_id stays globally unique by construction (a random uuid); the index serves the lookup by site_id.
alter table brands drop constraint brands_site_id_key, add constraint brands_site_id_key unique (account_id, site_id);
create index brands_site_id on brands (site_id);

alter table competitors drop constraint competitors_pkey, add primary key (account_id, id);
drop index competitors_brand_name;
create unique index competitors_brand_name on competitors (account_id, brand_id, lower(name));

alter table prompts drop constraint prompts_pkey, add primary key (account_id, id);
alter table prompts drop constraint prompts_num_key, add constraint prompts_num_key unique (account_id, num);
alter table prompts drop constraint prompts_brand_id_prompt_key, add constraint prompts_brand_id_prompt_key unique (account_id, brand_id, prompt);

alter table crawler_rollup drop constraint crawler_rollup_verdict_key,
  add constraint crawler_rollup_verdict_key unique nulls not distinct (account_id, brand_id, day, path, bot, status, verification);
alter table crawler_daily drop constraint crawler_daily_verdict_key,
  add constraint crawler_daily_verdict_key unique nulls not distinct (account_id, brand_id, day, bot, status, verification);
alter table crawler_span_state drop constraint crawler_span_state_pkey, add primary key (account_id, brand_id);
alter table crawler_span drop constraint crawler_span_pkey, add primary key (account_id, brand_id, span, path, bot);
alter table crawler_page_span drop constraint crawler_page_span_pkey, add primary key (account_id, brand_id, span, path);

alter table observations drop constraint observations_pkey, add primary key (account_id, id);
alter table observations drop constraint observations_key,
  add constraint observations_key unique (account_id, brand_id, prompt_id, engine, region, language, observed_at);
alter table mentions drop constraint mentions_pkey, add primary key (account_id, id);
alter table citations drop constraint citations_pkey, add primary key (account_id, observation_id, position);
alter table fanouts drop constraint fanouts_pkey, add primary key (account_id, id);
alter table fanouts drop constraint fanouts_observation_id_position_key,
  add constraint fanouts_observation_id_position_key unique (account_id, observation_id, position);
alter table fanout_citations drop constraint fanout_citations_pkey, add primary key (account_id, fanout_id, position);

alter table observation_daily drop constraint observation_daily_pkey, add primary key (account_id, brand_id, day, engine, region, language);
alter table mention_daily drop constraint mention_daily_pkey, add primary key (account_id, brand_id, day, engine, region, language, entity_id);
alter table citation_daily drop constraint citation_daily_pkey, add primary key (account_id, brand_id, day, engine, region, language, domain);
alter table prompt_daily drop constraint prompt_daily_pkey, add primary key (account_id, brand_id, day, prompt_id);
alter table prompt_entity_daily drop constraint prompt_entity_daily_pkey, add primary key (account_id, brand_id, entity_id, day, prompt_id);
alter table domain_daily drop constraint domain_daily_pkey, add primary key (account_id, brand_id, day, region, domain);
alter table domain_entity_daily drop constraint domain_entity_daily_pkey, add primary key (account_id, brand_id, entity_id, day, region, domain);

alter table scan_failures drop constraint scan_failures_pkey, add primary key (account_id, id);
alter table scan_engine_status drop constraint scan_engine_status_pkey, add primary key (account_id, brand_id, engine);

alter table webhook_endpoints drop constraint webhook_endpoints_pkey, add primary key (account_id, id);
alter table webhook_events drop constraint webhook_events_pkey, add primary key (account_id, id);
alter table webhook_deliveries drop constraint webhook_deliveries_pkey, add primary key (account_id, id);
alter table webhook_attempts drop constraint webhook_attempts_pkey, add primary key (account_id, delivery_id, attempt);
alter table brand_bots_seen drop constraint brand_bots_seen_pkey, add primary key (account_id, brand_id, bot);
alter table ingestion_health drop constraint ingestion_health_pkey, add primary key (account_id, brand_id, channel, hour);

-- 4. Time partitions. Each partitioned table is registered here; the service keeps `ahead` periods
-- created beyond the current one (TimePartitions.ts). A default partition takes a row no range
-- partition holds (a record older than every partition, say): it stays small, and is rewritten when
-- a range partition is made over its rows or retention passes them.
create table time_partitioned (
  parent text primary key,
  time_column text not null,
  period text not null check (period in ('week', 'month')),
  ahead integer not null check (ahead >= 1)
);

-- Partition names carry the UTC start of their period: <parent>_pYYYYMMDD, weeks starting on Monday.
create function time_partition_start(period text, at timestamptz) returns timestamp
language sql immutable as $$ select date_trunc(period, at at time zone 'UTC') $$;

create function time_partition_bound(at timestamp) returns text
language sql immutable as $$ select quote_literal(to_char(at, 'YYYY-MM-DD HH24:MI:SS') || '+00') $$;

-- Moves the default partition's rows (those at or after keep_from) into the partitions now existing,
-- and drops the rest with the old default table: a rewrite of the (small) default, never a DELETE.
create function time_partitions_rewrite_default(p_parent text, keep_from timestamptz) returns void
language plpgsql as $$
declare
  meta time_partitioned%rowtype;
  def text := p_parent || '_default';
begin
  select * into strict meta from time_partitioned where parent = p_parent;
  execute format('alter table %I detach partition %I', p_parent, def);
  execute format('alter table %I rename to %I', def, def || '_old');
  execute format('create table %I partition of %I default', def, p_parent);
  execute format('insert into %I select * from %I where %I >= $1', p_parent, def || '_old', meta.time_column) using keep_from;
  execute format('drop table %I', def || '_old');
end $$;

-- Creates the missing partitions of the periods from p_from to p_to; returns how many it created.
create function time_partitions_ensure(p_parent text, p_from timestamptz, p_to timestamptz) returns integer
language plpgsql as $$
declare
  meta time_partitioned%rowtype;
  step interval;
  lo timestamp;
  missing timestamp[] := '{}';
  crowded boolean := false;
  found_row boolean;
  def text := p_parent || '_default';
begin
  -- One maintainer at a time, whichever process runs it.
  perform pg_advisory_xact_lock(hashtext('time_partitions:' || p_parent));
  select * into strict meta from time_partitioned where parent = p_parent;
  step := ('1 ' || meta.period)::interval;
  lo := time_partition_start(meta.period, p_from);
  while lo <= p_to at time zone 'UTC' loop
    if to_regclass(p_parent || '_p' || to_char(lo, 'YYYYMMDD')) is null then
      missing := missing || lo;
      execute format('select exists (select 1 from %I where %I >= %s and %I < %s)', def, meta.time_column,
                     time_partition_bound(lo), meta.time_column, time_partition_bound(lo + step))
        into found_row;
      crowded := crowded or found_row;
    end if;
    lo := lo + step;
  end loop;
  if cardinality(missing) = 0 then return 0; end if;
  -- A range partition cannot be made over rows the default holds: detach it first, move them after.
  if crowded then
    execute format('alter table %I detach partition %I', p_parent, def);
    execute format('alter table %I rename to %I', def, def || '_old');
  end if;
  foreach lo in array missing loop
    execute format('create table %I partition of %I for values from (%s) to (%s)', p_parent || '_p' || to_char(lo, 'YYYYMMDD'),
                   p_parent, time_partition_bound(lo), time_partition_bound(lo + step));
  end loop;
  if crowded then
    execute format('create table %I partition of %I default', def, p_parent);
    execute format('insert into %I select * from %I', p_parent, def || '_old');
    execute format('drop table %I', def || '_old');
  end if;
  return cardinality(missing);
end $$;

-- Detaches and drops every partition whose whole period ends at or before p_before, and rewrites
-- the default without its rows before p_before; returns how many range partitions it dropped.
create function time_partitions_drop_before(p_parent text, p_before timestamptz) returns integer
language plpgsql as $$
declare
  meta time_partitioned%rowtype;
  step interval;
  r record;
  dropped integer := 0;
  stale boolean;
begin
  perform pg_advisory_xact_lock(hashtext('time_partitions:' || p_parent));
  select * into strict meta from time_partitioned where parent = p_parent;
  step := ('1 ' || meta.period)::interval;
  for r in
    select c.relname, to_date(substring(c.relname from '_p([0-9]{8})$'), 'YYYYMMDD')::timestamp as lo
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = p_parent::regclass and c.relname ~ '_p[0-9]{8}$'
    order by 2
  loop
    exit when r.lo + step > p_before at time zone 'UTC';
    execute format('alter table %I detach partition %I', p_parent, r.relname);
    execute format('drop table %I', r.relname);
    dropped := dropped + 1;
  end loop;
  execute format('select exists (select 1 from %I where %I < $1)', p_parent || '_default', meta.time_column)
    into stale using p_before;
  if stale then perform time_partitions_rewrite_default(p_parent, p_before); end if;
  return dropped;
end $$;

-- Crawler hits: weekly (docs/scale.md says why). The key gains the time column (a partitioned
-- table's unique keys must hold it): a record is its key at its time, as every redelivery carries it.
alter table crawler_hits rename to crawler_hits_unpartitioned;
alter table crawler_hits_unpartitioned drop constraint crawler_hits_pkey;
drop index crawler_hits_brand_ts;
drop index crawler_hits_verify_pending;
create table crawler_hits (like crawler_hits_unpartitioned including defaults) partition by range (ts);
alter table crawler_hits add primary key (account_id, brand_id, record_key, ts);
create index crawler_hits_brand_ts on crawler_hits (brand_id, ts);
create index crawler_hits_verify_pending on crawler_hits (ts) where verify_pending;
create table crawler_hits_default partition of crawler_hits default;
insert into time_partitioned (parent, time_column, period, ahead) values ('crawler_hits', 'ts', 'week', 4);
select time_partitions_ensure('crawler_hits', coalesce((select min(ts) from crawler_hits_unpartitioned), now()),
                              now() + interval '4 weeks');
insert into crawler_hits select * from crawler_hits_unpartitioned;
drop table crawler_hits_unpartitioned;

-- AI referrals: monthly (kept as long as the rollups, 400 days).
alter table ai_referrals rename to ai_referrals_unpartitioned;
alter table ai_referrals_unpartitioned drop constraint ai_referrals_pkey;
drop index ai_referrals_brand_ts;
create table ai_referrals (like ai_referrals_unpartitioned including defaults) partition by range (ts);
alter table ai_referrals add primary key (account_id, brand_id, record_key, ts);
create index ai_referrals_brand_ts on ai_referrals (brand_id, ts);
create table ai_referrals_default partition of ai_referrals default;
insert into time_partitioned (parent, time_column, period, ahead) values ('ai_referrals', 'ts', 'month', 2);
select time_partitions_ensure('ai_referrals', coalesce((select min(ts) from ai_referrals_unpartitioned), now()),
                              now() + interval '2 months');
insert into ai_referrals select * from ai_referrals_unpartitioned;
drop table ai_referrals_unpartitioned;

-- 5. Foreign keys again, each with account_id (on delete cascade as before: deleting an account deletes
-- its brands, and a brand everything under it).
do $$
declare t text;
begin
  foreach t in array array['competitors', 'prompts', 'crawler_hits', 'crawler_rollup', 'crawler_daily', 'crawler_span_state',
                           'crawler_span', 'crawler_page_span', 'ai_referrals', 'observations', 'mentions', 'citations',
                           'fanouts', 'fanout_citations', 'observation_daily', 'mention_daily', 'citation_daily',
                           'prompt_daily', 'prompt_entity_daily', 'domain_daily', 'domain_entity_daily', 'scan_failures',
                           'scan_engine_status', 'brand_bots_seen', 'ingestion_health']
  loop
    execute format('alter table %I add constraint %I foreign key (account_id, brand_id) references brands (account_id, id) on delete cascade',
                   t, t || '_brand_fkey');
  end loop;
end $$;
alter table mentions add constraint mentions_competitor_fkey foreign key (account_id, competitor_id)
  references competitors (account_id, id) on delete cascade;
alter table observations add constraint observations_prompt_fkey foreign key (account_id, prompt_id)
  references prompts (account_id, id) on delete cascade;
alter table scan_failures add constraint scan_failures_prompt_fkey foreign key (account_id, prompt_id)
  references prompts (account_id, id) on delete cascade;
alter table mentions add constraint mentions_observation_fkey foreign key (account_id, observation_id)
  references observations (account_id, id) on delete cascade;
alter table citations add constraint citations_observation_fkey foreign key (account_id, observation_id)
  references observations (account_id, id) on delete cascade;
alter table fanouts add constraint fanouts_observation_fkey foreign key (account_id, observation_id)
  references observations (account_id, id) on delete cascade;
alter table fanout_citations add constraint fanout_citations_fanout_fkey foreign key (account_id, fanout_id)
  references fanouts (account_id, id) on delete cascade;
alter table webhook_deliveries add constraint webhook_deliveries_endpoint_fkey foreign key (account_id, endpoint_id)
  references webhook_endpoints (account_id, id) on delete cascade;
alter table webhook_deliveries add constraint webhook_deliveries_event_fkey foreign key (account_id, event_id)
  references webhook_events (account_id, id) on delete cascade;
alter table webhook_attempts add constraint webhook_attempts_delivery_fkey foreign key (account_id, delivery_id)
  references webhook_deliveries (account_id, id) on delete cascade;

-- Lookups that went through the old single-column keys keep an index of their own.
create index mentions_id on mentions (id);
create index observations_id on observations (id);
create index fanouts_id on fanouts (id);
create index webhook_deliveries_id on webhook_deliveries (id);
create index webhook_events_id on webhook_events (id);
create index webhook_endpoints_id on webhook_endpoints (id);
create index prompts_id on prompts (id);
create index competitors_id on competitors (id);
create index brands_id on brands (id);
