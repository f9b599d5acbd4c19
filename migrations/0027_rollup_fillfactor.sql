-- The aggregator updates the same rollup and span rows over and over (docs/performance.md, "The rollup
-- aggregator"). None of the columns it changes in these three tables is indexed, so with room left on
-- the page PostgreSQL updates a row in place (a HOT update): no new entry in every index, and the old
-- version pruned with the page. A full page (the default fill factor, 100) forces a new version on
-- another page and new index entries for every update. New pages keep this room; old ones as they are.
alter table crawler_rollup set (fillfactor = 70);
alter table crawler_daily set (fillfactor = 70);
alter table crawler_span set (fillfactor = 70);
