-- Hits reported by the anonymous JavaScript tag (POST /tag/collect) are marked: anyone who knows a
-- site's public id can send them, so they are never taken for a server log's word (docs/security.md).
alter table crawler_hits add column unauthenticated boolean not null default false;
