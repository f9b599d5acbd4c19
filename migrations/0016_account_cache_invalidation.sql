-- What each server process keeps of an account in memory (its brands with their plan's figures,
-- src/brands/Brands.ts) is dropped on every change to it, whoever makes it (the services, the scanner
-- moving next scan times, the CLI changing a plan, SQL by hand): the change notifies the invalidation
-- channel at its commit. `account:<id>` names one account, `account:*` every account (a plan's caps, a
-- truncate). PostgreSQL folds identical notifications of one transaction into one.

-- The trigger's argument names the column that holds the account's id; without one (a statement-level
-- trigger) every account.
create function account_cache_notify() returns trigger
language plpgsql as $$
begin
  perform pg_notify('aiv_api_key_revoked', 'account:' || case
    when tg_nargs = 0 then '*'
    when tg_op = 'DELETE' then to_jsonb(old) ->> tg_argv[0]
    else to_jsonb(new) ->> tg_argv[0]
  end);
  return null;
end $$;

create trigger brands_changed after insert or update or delete on brands
  for each row execute function account_cache_notify('account_id');
create trigger brands_truncated after truncate on brands
  for each statement execute function account_cache_notify();
create trigger accounts_plan_changed after update of plan_id or delete on accounts
  for each row execute function account_cache_notify('id');
create trigger plans_changed after insert or update or delete or truncate on plans
  for each statement execute function account_cache_notify();
