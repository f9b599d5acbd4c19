-- Every row change that can change a cached answer notifies the invalidation channel at its commit,
-- whoever makes it (the services, the CLI, SQL by hand): a brand moved to another account is dropped
-- from its old account's cache as well as its new one's; a key revoked, changed or deleted (with its
-- account too: the cascade fires the row trigger) is dropped from every process's key cache, whose
-- payload is the key's bare hash ('*': every key).

create or replace function account_cache_notify() returns trigger
language plpgsql as $$
begin
  if tg_nargs > 0 and tg_op = 'UPDATE' and (to_jsonb(old) ->> tg_argv[0]) is distinct from (to_jsonb(new) ->> tg_argv[0]) then
    perform pg_notify('aiv_api_key_revoked', 'account:' || (to_jsonb(old) ->> tg_argv[0]));
  end if;
  perform pg_notify('aiv_api_key_revoked', 'account:' || case
    when tg_nargs = 0 then '*'
    when tg_op = 'DELETE' then to_jsonb(old) ->> tg_argv[0]
    else to_jsonb(new) ->> tg_argv[0]
  end);
  return null;
end $$;

create function api_key_cache_notify() returns trigger
language plpgsql as $$
begin
  if tg_op = 'TRUNCATE' then
    perform pg_notify('aiv_api_key_revoked', '*');
  else
    perform pg_notify('aiv_api_key_revoked', old.key_hash);
  end if;
  return null;
end $$;

create trigger api_keys_changed after update of revoked_at, key_hash, account_id or delete on api_keys
  for each row execute function api_key_cache_notify();
create trigger api_keys_truncated after truncate on api_keys
  for each statement execute function api_key_cache_notify();
