-- Verified agents: the verdict of every crawler hit as a dimension of the rollups. docs/verification.md.

-- Stored hits carry over as 'unverified' (docs/verification.md says why: a verdict is taken against the
-- ranges in force when the hit arrived, and the rollups older than the raw hits could not be re-checked).
alter table crawler_hits add column verification text not null default 'unverified';
-- true while a reverse-DNS answer is awaited: the background pass settles it and moves the counts.
alter table crawler_hits add column verify_pending boolean not null default false;
create index crawler_hits_verify_pending on crawler_hits (ts) where verify_pending;

-- The rollups gain the verdict in their key; every existing row is 'unverified'.
alter table crawler_rollup add column verification text not null default 'unverified';
alter table crawler_rollup drop constraint crawler_rollup_key;
alter table crawler_rollup add constraint crawler_rollup_verdict_key
  unique nulls not distinct (brand_id, day, path, bot, status, verification);

alter table crawler_daily add column verification text not null default 'unverified';
alter table crawler_daily drop constraint crawler_daily_key;
alter table crawler_daily add constraint crawler_daily_verdict_key
  unique nulls not distinct (brand_id, day, bot, status, verification);

-- Range snapshots saved by `cli ranges update`: the newest one is what every server checks against
-- (a NOTIFY on aiv_ranges_updated tells running servers to reload it).
create table verification_snapshots (
  id bigserial primary key,
  saved_at timestamptz not null default now(),
  snapshot text not null
);
