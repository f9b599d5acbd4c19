-- Reading real answers (docs/observations.md, "Failures by reason"): each failed scan call keeps its
-- reason (refused, blocked, incomplete, empty, rate_limited...), and the last scan per engine counts
-- its failures by reason for the dashboard and `cli scan`. Failures recorded before have no reason.
alter table scan_failures add column reason text not null default 'unknown';
alter table scan_engine_status add column failures_by_reason jsonb not null default '{}'::jsonb;

-- The share-of-voice interval when its variance is 0 (docs/visibility.md, "Intervals"): the Wilson
-- interval over the observations that mention at least one entity. The daily rollups count them,
-- maintained by ObservationsRepo.insert in the same transaction as the other sums.
alter table observation_daily add column entity_observations integer not null default 0;
alter table prompt_daily add column entity_observations integer not null default 0;

-- Backfill from the rows already stored (the same definition as the write path).
create temp table observations_naming as
select o.brand_id, o.day, o.engine, o.region, o.language, o.prompt_id
from observations o
where exists (select 1 from mentions m where m.account_id = o.account_id and m.observation_id = o.id);

update observation_daily d set entity_observations = s.k
from (select brand_id, day, engine, region, language, count(*)::int as k
      from observations_naming group by brand_id, day, engine, region, language) s
where d.brand_id = s.brand_id and d.day = s.day and d.engine = s.engine and d.region = s.region and d.language = s.language;

update prompt_daily d set entity_observations = s.k
from (select brand_id, day, prompt_id, count(*)::int as k from observations_naming group by brand_id, day, prompt_id) s
where d.brand_id = s.brand_id and d.day = s.day and d.prompt_id = s.prompt_id;
drop table observations_naming;
-- End of the backfill.
