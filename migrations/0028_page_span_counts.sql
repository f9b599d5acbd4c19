-- How many page span rows (paths) each 7/30/90-day window of a brand holds, kept beside the windows'
-- end day: the pages list's total and the KPIs' page count read it instead of counting the window's
-- rows (about a third of such a read: the rows' pages change with every fold, so an index-only count
-- still visits the table). Written where crawler_page_span's rows are: its rebuild sets them, the
-- aggregator's fold adds the paths it inserts, in the same transactions (src/agents/Repo.ts).
alter table crawler_span_state
  add column pages_7 integer not null default 0,
  add column pages_30 integer not null default 0,
  add column pages_90 integer not null default 0;

update crawler_span_state s set
  pages_7 = (select count(*) from crawler_page_span p where p.account_id = s.account_id and p.brand_id = s.brand_id and p.span = 7),
  pages_30 = (select count(*) from crawler_page_span p where p.account_id = s.account_id and p.brand_id = s.brand_id and p.span = 30),
  pages_90 = (select count(*) from crawler_page_span p where p.account_id = s.account_id and p.brand_id = s.brand_id and p.span = 90);
