-- Rollups for the visibility reads (docs/visibility.md), maintained at write time by
-- ObservationsRepo.insert in the same transaction as the rows they count, like those of 0003.
-- They answer the figures that need a per-observation join (topic ranking, competitor prompts,
-- competitor citations, gap) from a few thousand rows instead of the raw mentions and citations.

-- Observations per prompt (every region and engine): the population of the topic ranking.
create table prompt_daily (
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  day date not null,
  prompt_id uuid not null,
  responses integer not null,
  primary key (brand_id, day, prompt_id)
);

-- Mentions per entity (0 = the brand, else a competitor id) and prompt (every region and engine).
-- with_brand = mentions of the entity in observations that also mention the brand; engines = the
-- engines of those mentions as a bit set (bit i = the i-th slug of ENGINE_SLUGS, src/platform/Schemas.ts),
-- so that a competitor's prompts over 90 days read one row per day and prompt, not one per engine too.
create table prompt_entity_daily (
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  entity_id integer not null,
  day date not null,
  prompt_id uuid not null,
  engines integer not null,
  mentions integer not null,
  rank_sum integer not null,
  with_brand integer not null,
  positive integer not null,
  neutral integer not null,
  negative integer not null,
  primary key (brand_id, entity_id, day, prompt_id)
);
-- The topic ranking reads the rows of a few prompts.
create index prompt_entity_daily_prompt on prompt_entity_daily (prompt_id, day);

-- Answer citations per domain and region, with the observations citing the domain that mention
-- at least one competitor / the brand (the gap). Also the workspace-wide /citations.
create table domain_daily (
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  day date not null,
  region text not null,
  domain text not null,
  bucket text not null,
  citations integer not null,
  competitor_observations integer not null,
  brand_observations integer not null,
  primary key (brand_id, day, region, domain)
);
create index domain_daily_account on domain_daily (account_id, day);

-- Answer citations per domain in observations mentioning a competitor (entity_id = competitor id).
create table domain_entity_daily (
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  entity_id integer not null,
  day date not null,
  region text not null,
  domain text not null,
  bucket text not null,
  citations integer not null, -- citation URLs on the domain in those observations
  observations integer not null, -- observations mentioning the competitor that cite the domain
  primary key (brand_id, entity_id, day, region, domain)
);
create index domain_entity_daily_domain on domain_entity_daily (brand_id, domain, day);

-- The latest decomposition of a prompt on an engine (GET /citations/fanouts).
create index fanouts_latest on fanouts (prompt_id, engine, day) where position = 1;

-- Backfill from the rows already stored (the same definitions as the write path).
insert into prompt_daily (account_id, brand_id, day, prompt_id, responses)
select account_id, brand_id, day, prompt_id, count(*)::int
from observations group by account_id, brand_id, day, prompt_id;

insert into prompt_entity_daily (account_id, brand_id, entity_id, day, prompt_id, engines, mentions, rank_sum, with_brand,
                                 positive, neutral, negative)
select m.account_id, m.brand_id, coalesce(m.competitor_id, 0), m.day, m.prompt_id,
       coalesce(bit_or(1 << (array_position(array['chatgpt','perplexity','gemini','claude','copilot','grok','deepseek','ai_overview','ai_mode'], m.engine) - 1)), 0),
       count(*)::int, sum(m.rank)::int,
       (count(*) filter (where o.brand_mentioned))::int,
       (count(*) filter (where m.sentiment_label = 'positive'))::int,
       (count(*) filter (where m.sentiment_label = 'neutral'))::int,
       (count(*) filter (where m.sentiment_label = 'negative'))::int
from mentions m join observations o on o.id = m.observation_id
group by m.account_id, m.brand_id, coalesce(m.competitor_id, 0), m.day, m.prompt_id;

insert into domain_daily (account_id, brand_id, day, region, domain, bucket, citations, competitor_observations, brand_observations)
select c.account_id, c.brand_id, c.day, c.region, c.domain, min(c.bucket), count(*)::int,
       (count(distinct c.observation_id) filter (where o.mentioned_competitors > 0))::int,
       (count(distinct c.observation_id) filter (where o.brand_mentioned))::int
from citations c join observations o on o.id = c.observation_id
group by c.account_id, c.brand_id, c.day, c.region, c.domain;

insert into domain_entity_daily (account_id, brand_id, entity_id, day, region, domain, bucket, citations, observations)
select c.account_id, c.brand_id, m.competitor_id, c.day, c.region, c.domain, min(c.bucket), count(*)::int,
       count(distinct c.observation_id)::int
from citations c join mentions m on m.observation_id = c.observation_id and m.competitor_id is not null
group by c.account_id, c.brand_id, m.competitor_id, c.day, c.region, c.domain;
