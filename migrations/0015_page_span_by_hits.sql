-- The crawled-pages list and the dashboard's top pages sort a window's paths by hits (then path,
-- byte order): this index hands them the first rows in that order instead of a sort of all the
-- brand's paths, and counts them without reading the table.
create index crawler_page_span_by_hits on crawler_page_span (account_id, brand_id, span, hits desc, path collate "C");
