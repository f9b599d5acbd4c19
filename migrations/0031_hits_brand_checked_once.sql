-- A delivery's hits and referrals are tied to their brand once per statement, not once per row.
-- The foreign keys of crawler_hits and ai_referrals to brands ran a referential check per inserted
-- row: 18 lookups and lock checks of the same brand row for a 20-record delivery, about a tenth of
-- the delivery's PostgreSQL time (docs/performance.md). The store's statement now takes the brand
-- row's key-share lock once (what the checks took) and stores nothing if the brand is gone; these
-- triggers keep what the keys did when a brand is deleted or re-keyed in SQL.
alter table crawler_hits drop constraint crawler_hits_brand_fkey;
alter table ai_referrals drop constraint ai_referrals_brand_fkey;

-- on delete cascade: a deleted brand (or account) takes its hits and referrals.
create function brands_deleted_take_hits() returns trigger language plpgsql as $$
begin
  delete from crawler_hits h using gone g where h.account_id = g.account_id and h.brand_id = g.id;
  delete from ai_referrals r using gone g where r.account_id = g.account_id and r.brand_id = g.id;
  return null;
end $$;
create trigger brands_deleted_take_hits after delete on brands
  referencing old table as gone for each statement execute function brands_deleted_take_hits();

-- on update no action: a brand moved to another account while it has hits or referrals is refused.
create function brands_rekeyed_keep_hits() returns trigger language plpgsql as $$
begin
  if exists (select 1 from crawler_hits where account_id = old.account_id and brand_id = old.id)
     or exists (select 1 from ai_referrals where account_id = old.account_id and brand_id = old.id) then
    raise exception 'brand % of account % still has crawler hits or referrals', old.id, old.account_id
      using errcode = 'foreign_key_violation';
  end if;
  return null;
end $$;
create trigger brands_rekeyed_keep_hits after update of account_id, id on brands
  for each row when (old.account_id is distinct from new.account_id or old.id is distinct from new.id)
  execute function brands_rekeyed_keep_hits();
