-- One canonical form of an email (src/platform/Email.ts, docs/security.md "One spelling of an email"):
-- the sign-in look-up compares users.email_key with the canonical form of what was typed, exactly, so the
-- rate limit's bucket and the account found can never disagree (lower() depends on the database's
-- locale; the canonical form does not). For an ASCII address the canonical form is its ASCII lower case,
-- written here; the server fills any other row's key at start, computing it the one way.
alter table users add column email_key text;
update users set email_key = translate(btrim(email), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
  where octet_length(email) = char_length(email);
drop index users_email_key;
create unique index users_email_key on users (email_key);

-- Which API keys a plan's cap leaves working (the oldest active ones) changes with the account's keys
-- too: a key created, revoked or deleted, whoever does it, drops what every process caches of the account
-- (the function of migrations/0016_account_cache_invalidation.sql).
create trigger api_keys_account_changed after insert or update of revoked_at or delete on api_keys
  for each row execute function account_cache_notify('account_id');
