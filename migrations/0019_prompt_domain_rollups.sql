-- The gap of one topic (GET /industry/gap?topic=, docs/visibility.md) from rollups instead of the stored
-- answers, citations and mentions: the same sums as domain_daily and domain_entity_daily, per prompt too,
-- so that the prompts of a topic select their rows. Maintained by ObservationsRepo.insert in the same
-- transaction as the rows they count, like those of 0004.

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
-- End of the backfill.
