-- Reads of one topic from rollups instead of the stored answers, citations and mentions (docs/visibility.md):
-- the gap (GET /industry/gap?topic=) and the share of voice on one engine or in one region. Maintained by
-- ObservationsRepo.insert in the same transaction as the rows they count, like those of 0004.

-- Answer citations per prompt, domain and region: the observations citing the domain that mention at
-- least one competitor / the brand.
create table prompt_domain_daily (
  account_id bigint not null,
  brand_id integer not null,
  day date not null,
  region text not null,
  prompt_id uuid not null,
  domain text not null,
  bucket text not null,
  competitor_observations integer not null,
  brand_observations integer not null,
  primary key (account_id, brand_id, day, prompt_id, region, domain),
  foreign key (account_id, brand_id) references brands (account_id, id) on delete cascade
);

-- Observations citing the domain that mention the competitor (entity_id = competitor id), per prompt.
create table prompt_domain_entity_daily (
  account_id bigint not null,
  brand_id integer not null,
  entity_id integer not null,
  day date not null,
  region text not null,
  prompt_id uuid not null,
  domain text not null,
  observations integer not null,
  primary key (account_id, brand_id, day, prompt_id, region, domain, entity_id),
  foreign key (account_id, brand_id) references brands (account_id, id) on delete cascade
);

-- The share of voice of one topic on one engine or in one region (GET /industry/ranking?topic=&engine=&region=):
-- the sums of prompt_daily and prompt_entity_daily (0004, 0012, 0024) per engine and region too. m = the
-- entities an observation mentions.
create table prompt_scope_daily (
  account_id bigint not null,
  brand_id integer not null,
  day date not null,
  prompt_id uuid not null,
  engine text not null,
  region text not null,
  responses integer not null,
  entity_mentions integer not null, -- sum of m
  entity_mentions_sq integer not null, -- sum of m squared
  entity_observations integer not null, -- observations with m > 0
  primary key (account_id, brand_id, day, prompt_id, engine, region),
  foreign key (account_id, brand_id) references brands (account_id, id) on delete cascade
);

-- Per entity (0 = the brand, else a competitor id): mentions, the sum of m over them, rank sum, sentiment labels.
create table prompt_entity_scope_daily (
  account_id bigint not null,
  brand_id integer not null,
  entity_id integer not null,
  day date not null,
  prompt_id uuid not null,
  engine text not null,
  region text not null,
  mentions integer not null,
  co_mentions integer not null,
  rank_sum integer not null,
  positive integer not null,
  neutral integer not null,
  negative integer not null,
  primary key (account_id, brand_id, day, prompt_id, engine, region, entity_id),
  foreign key (account_id, brand_id) references brands (account_id, id) on delete cascade
);

-- Backfill from the rows already stored (the same definitions as the write path).
insert into prompt_domain_daily (account_id, brand_id, day, region, prompt_id, domain, bucket, competitor_observations, brand_observations)
select c.account_id, c.brand_id, c.day, c.region, o.prompt_id, c.domain, min(c.bucket),
       (count(distinct c.observation_id) filter (where o.mentioned_competitors > 0))::int,
       (count(distinct c.observation_id) filter (where o.brand_mentioned))::int
from citations c join observations o on o.account_id = c.account_id and o.id = c.observation_id
group by c.account_id, c.brand_id, c.day, c.region, o.prompt_id, c.domain;

insert into prompt_domain_entity_daily (account_id, brand_id, entity_id, day, region, prompt_id, domain, observations)
select c.account_id, c.brand_id, m.competitor_id, c.day, c.region, m.prompt_id, c.domain, count(distinct c.observation_id)::int
from citations c
join mentions m on m.account_id = c.account_id and m.observation_id = c.observation_id and m.competitor_id is not null
group by c.account_id, c.brand_id, m.competitor_id, c.day, c.region, m.prompt_id, c.domain;

create temp table observation_entities_0019 as
select o.account_id, o.id, o.brand_id, o.day, o.prompt_id, o.engine, o.region,
       (select count(*) from mentions m where m.account_id = o.account_id and m.observation_id = o.id)::int as m
from observations o;

insert into prompt_scope_daily (account_id, brand_id, day, prompt_id, engine, region, responses, entity_mentions, entity_mentions_sq,
                                entity_observations)
select account_id, brand_id, day, prompt_id, engine, region, count(*)::int, sum(m)::int, sum(m * m)::int,
       (count(*) filter (where m > 0))::int
from observation_entities_0019
group by account_id, brand_id, day, prompt_id, engine, region;

insert into prompt_entity_scope_daily (account_id, brand_id, entity_id, day, prompt_id, engine, region, mentions, co_mentions,
                                       rank_sum, positive, neutral, negative)
select e.account_id, e.brand_id, coalesce(m.competitor_id, 0), e.day, e.prompt_id, e.engine, e.region, count(*)::int,
       sum(e.m)::int, sum(m.rank)::int,
       (count(*) filter (where m.sentiment_label = 'positive'))::int,
       (count(*) filter (where m.sentiment_label = 'neutral'))::int,
       (count(*) filter (where m.sentiment_label = 'negative'))::int
from mentions m join observation_entities_0019 e on e.account_id = m.account_id and e.id = m.observation_id
group by e.account_id, e.brand_id, coalesce(m.competitor_id, 0), e.day, e.prompt_id, e.engine, e.region;
drop table observation_entities_0019;
-- End of the backfill.
