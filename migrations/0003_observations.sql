-- Answer observations (docs/observations.md), analysed once at write time (src/observations/Analysis.ts).
-- The read endpoints are queries over these tables; docs/observations.md explains each column.
--
-- Every child row repeats the observation's account, brand, UTC day and engine/region so that the
-- per-brand and per-account aggregates filter on their own indexes without joining back.

create table observations (
  id bigint generated always as identity primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null references brands (id) on delete cascade,
  prompt_id uuid not null references prompts (id) on delete cascade,
  engine text not null,
  region text not null,
  language text not null,
  observed_at timestamptz not null,
  day date not null, -- UTC day of observed_at
  origin text not null, -- scan, import or demo
  response text not null,
  brand_mentioned boolean not null,
  brand_rank integer, -- null when the brand is not mentioned
  brand_cited boolean not null, -- at least one answer citation on the brand's domain
  mentioned_competitors integer not null, -- how many tracked competitors are mentioned
  citation_count integer not null, -- answer citations (fan-out citations not included)
  created_at timestamptz not null default now(),
  -- Idempotent import: the same observation is stored once.
  constraint observations_key unique (brand_id, prompt_id, engine, region, language, observed_at)
);
-- Per brand and day (snapshots, time series, per-engine and per-region filters).
create index observations_brand_day on observations (brand_id, day, engine, region);
-- Per account and day (portfolio, workspace-wide reads).
create index observations_account_day on observations (account_id, day);

-- One row per mentioned entity (the brand itself: competitor_id null) per observation.
create table mentions (
  id bigint generated always as identity primary key,
  observation_id bigint not null references observations (id) on delete cascade,
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  competitor_id integer references competitors (id) on delete cascade,
  entity text not null, -- the entity's name when analysed
  prompt_id uuid not null,
  engine text not null,
  region text not null,
  language text not null,
  observed_at timestamptz not null,
  day date not null,
  rank integer not null,
  sentiment double precision not null, -- [-1, 1]
  sentiment_label text not null, -- positive, neutral, negative
  snippet text not null, -- '' when mentioned only through a citation
  cited_url text,
  via_citation_only boolean not null
);
create index mentions_observation on mentions (observation_id);
-- The brand's own mentions, newest first (GET /brands/{slug}/mentions).
create index mentions_brand_own on mentions (brand_id, observed_at desc) where competitor_id is null;
-- Competitor aggregates per brand and day (share of voice, competitor prompts).
create index mentions_brand_day on mentions (brand_id, day, competitor_id);

-- Answer citations, in answer order (position from 1).
create table citations (
  observation_id bigint not null references observations (id) on delete cascade,
  position integer not null,
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  engine text not null,
  region text not null,
  day date not null,
  url text not null,
  domain text not null, -- host without www.
  bucket text not null, -- owned, competitor, ugc, reference, earned
  primary key (observation_id, position)
);
create index citations_brand_day on citations (brand_id, day, domain);
create index citations_account_day on citations (account_id, day, domain);

-- Fan-out sub-questions of an answer (docs/observations.md), position from 1 (the API's `index`).
create table fanouts (
  id bigint generated always as identity primary key,
  observation_id bigint not null references observations (id) on delete cascade,
  position integer not null,
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  prompt_id uuid not null,
  engine text not null,
  day date not null,
  sub_question text not null,
  unique (observation_id, position)
);
create index fanouts_account_day on fanouts (account_id, day, prompt_id, engine);

create table fanout_citations (
  fanout_id bigint not null references fanouts (id) on delete cascade,
  position integer not null,
  account_id bigint not null,
  brand_id integer not null,
  day date not null,
  url text not null,
  domain text not null,
  bucket text not null,
  primary key (fanout_id, position)
);
create index fanout_citations_account_day on fanout_citations (account_id, day, domain);

-- Daily rollups, maintained in the same transaction as the rows they count (only newly stored
-- observations are added, so an import replayed adds nothing). The aggregates of docs/observations.md
-- section 2 that need no per-observation join read these: at 2 million observations a 90-day
-- per-brand figure reads a few thousand rollup rows instead of hundreds of thousands of mentions.
create table observation_daily (
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  day date not null,
  engine text not null,
  region text not null,
  language text not null,
  responses integer not null,
  brand_mentions integer not null,
  brand_cited integer not null, -- observations with a citation on the brand's domain
  citations integer not null, -- answer citation URLs
  primary key (brand_id, day, engine, region, language)
);
create index observation_daily_account on observation_daily (account_id, day);

-- Per entity: entity_id 0 is the brand itself, otherwise a competitor id.
create table mention_daily (
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  day date not null,
  engine text not null,
  region text not null,
  language text not null,
  entity_id integer not null,
  mentions integer not null,
  rank_sum integer not null,
  top1 integer not null,
  top3 integer not null,
  sentiment_sum double precision not null,
  positive integer not null,
  neutral integer not null,
  negative integer not null,
  primary key (brand_id, day, engine, region, language, entity_id)
);
create index mention_daily_account on mention_daily (account_id, day);

-- Answer citation URLs per domain (fan-out citations are not counted here).
create table citation_daily (
  account_id bigint not null,
  brand_id integer not null references brands (id) on delete cascade,
  day date not null,
  engine text not null,
  region text not null,
  language text not null,
  domain text not null,
  bucket text not null,
  citations integer not null,
  primary key (brand_id, day, engine, region, language, domain)
);
create index citation_daily_account on citation_daily (account_id, day);

-- Engine calls the scanner gave up on after its retries (the other engines go on).
create table scan_failures (
  id bigint generated always as identity primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null references brands (id) on delete cascade,
  prompt_id uuid not null references prompts (id) on delete cascade,
  engine text not null,
  attempts integer not null,
  error text not null,
  failed_at timestamptz not null
);
create index scan_failures_brand on scan_failures (brand_id, failed_at);

-- The scanner picks brands whose next scan is due.
create index brands_next_scan on brands (next_scan_at);
