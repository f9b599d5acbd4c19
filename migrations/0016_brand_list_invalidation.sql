-- The brand lists kept in each server process's memory (src/brands/Brands.ts) are dropped on every
-- change to what they hold, whoever makes it (the service, the scanner, the CLI, SQL by hand): the
-- change notifies the invalidation channel at its commit. `brands:<account id>` names one account's
-- list, `brands:*` every list (a plan's caps, a truncate). PostgreSQL folds identical notifications
-- of one transaction into one.

create function brand_lists_notify_row() returns trigger
language plpgsql as $$
begin
  perform pg_notify('aiv_api_key_revoked', 'brands:' || coalesce(new.account_id, old.account_id)::text);
  return null;
end $$;

create function brand_lists_notify_account() returns trigger
language plpgsql as $$
begin
  perform pg_notify('aiv_api_key_revoked', 'brands:' || coalesce(new.id, old.id)::text);
  return null;
end $$;

create function brand_lists_notify_all() returns trigger
language plpgsql as $$
begin
  perform pg_notify('aiv_api_key_revoked', 'brands:*');
  return null;
end $$;

create trigger brands_list_changed after insert or update or delete on brands
  for each row execute function brand_lists_notify_row();
create trigger brands_truncated after truncate on brands
  for each statement execute function brand_lists_notify_all();
create trigger accounts_plan_changed after update of plan_id or delete on accounts
  for each row execute function brand_lists_notify_account();
create trigger plans_changed after insert or update or delete or truncate on plans
  for each statement execute function brand_lists_notify_all();
