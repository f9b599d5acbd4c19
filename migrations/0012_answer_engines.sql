-- How sure each figure is (docs/visibility.md, "Intervals"). The share-of-voice interval needs sums
-- over the observations of a population, not only over mentions: with m = the number of entities an
-- observation mentions (its rows in mentions), the population's sum of m and of m², and per entity the
-- sum of m over the observations mentioning it. They extend the daily rollups that already give the
-- share itself, maintained by ObservationsRepo.insert in the same transaction, so the reads stay on a
-- few thousand rollup rows.
alter table observation_daily add column entity_mentions integer not null default 0;
alter table observation_daily add column entity_mentions_sq integer not null default 0;
alter table mention_daily add column co_mentions integer not null default 0;
alter table prompt_daily add column entity_mentions integer not null default 0;
alter table prompt_daily add column entity_mentions_sq integer not null default 0;
alter table prompt_entity_daily add column co_mentions integer not null default 0;

-- Backfill from the rows already stored (the same definitions as the write path).
create temp table observation_entities as
select o.id, o.brand_id, o.day, o.engine, o.region, o.language, o.prompt_id,
       (select count(*) from mentions m where m.observation_id = o.id)::int as m
from observations o;

update observation_daily d set entity_mentions = s.m, entity_mentions_sq = s.m2
from (select brand_id, day, engine, region, language, sum(m)::int as m, sum(m * m)::int as m2
      from observation_entities group by brand_id, day, engine, region, language) s
where d.brand_id = s.brand_id and d.day = s.day and d.engine = s.engine and d.region = s.region and d.language = s.language;

update prompt_daily d set entity_mentions = s.m, entity_mentions_sq = s.m2
from (select brand_id, day, prompt_id, sum(m)::int as m, sum(m * m)::int as m2
      from observation_entities group by brand_id, day, prompt_id) s
where d.brand_id = s.brand_id and d.day = s.day and d.prompt_id = s.prompt_id;

update mention_daily d set co_mentions = s.am
from (select e.brand_id, e.day, e.engine, e.region, e.language, coalesce(m.competitor_id, 0) as entity_id, sum(e.m)::int as am
      from mentions m join observation_entities e on e.id = m.observation_id
      group by e.brand_id, e.day, e.engine, e.region, e.language, coalesce(m.competitor_id, 0)) s
where d.brand_id = s.brand_id and d.day = s.day and d.engine = s.engine and d.region = s.region and d.language = s.language
  and d.entity_id = s.entity_id;

update prompt_entity_daily d set co_mentions = s.am
from (select e.brand_id, e.day, e.prompt_id, coalesce(m.competitor_id, 0) as entity_id, sum(e.m)::int as am
      from mentions m join observation_entities e on e.id = m.observation_id
      group by e.brand_id, e.day, e.prompt_id, coalesce(m.competitor_id, 0)) s
where d.brand_id = s.brand_id and d.day = s.day and d.prompt_id = s.prompt_id and d.entity_id = s.entity_id;
drop table observation_entities;
-- End of the backfill.

-- What a scan cost (docs/observations.md, "Scanner"): the tokens the provider reported for each answer
-- (null for imports, the demo, and providers that report none) and its reported cost in USD.
alter table observations add column input_tokens integer;
alter table observations add column output_tokens integer;
alter table observations add column cost_usd double precision;

-- Tokens of scanned answers per account and UTC month, added in the same transaction as the
-- observations: the monthly budget (SCAN_MONTHLY_TOKEN_BUDGET) reads one row.
create table scan_token_usage (
  account_id bigint not null references accounts (id) on delete cascade,
  month date not null, -- first day of the UTC month
  tokens bigint not null,
  primary key (account_id, month)
);

-- The last scan of each brand and engine, for the dashboard: when, what it stored, what failed and why.
create table scan_engine_status (
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null references brands (id) on delete cascade,
  engine text not null,
  scanned_at timestamptz not null,
  observations integer not null,
  failures integer not null,
  last_error text, -- null when every call succeeded
  tokens bigint not null,
  primary key (brand_id, engine)
);
