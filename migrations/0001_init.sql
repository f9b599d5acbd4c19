-- Plans and their entitlements (docs/decisions.md "Plans"); changed by the operator, read everywhere from here.
create table plans (
  id text primary key,
  paid boolean not null,
  max_keys integer not null,
  max_brands integer not null,
  max_prompts integer not null,
  batch_ingest boolean not null,
  drain_ingest boolean not null,
  monthly_events bigint not null,
  scan_hours integer not null,
  rank integer not null
);

insert into plans (id, paid, max_keys, max_brands, max_prompts, batch_ingest, drain_ingest, monthly_events, scan_hours, rank) values
  ('free',       false,  1,   1,   10, false, false,        0, 168, 0),
  ('starter',    true,   3,   3,   50, true,  false,   100000,  72, 1),
  ('growth',     true,  10,  10,  250, true,  true,   1000000,  24, 2),
  ('enterprise', true,  50, 100, 2500, true,  true,  50000000,   6, 3);

create table accounts (
  id bigint generated always as identity primary key,
  name text not null,
  plan_id text not null default 'free' references plans (id),
  created_at timestamptz not null default now()
);

create table users (
  id bigint generated always as identity primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  email text not null,
  password_hash text not null,
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));
create index users_account on users (account_id);

-- Dashboard sessions: only the SHA-256 of the cookie token is stored.
create table sessions (
  token_hash text primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index sessions_user on sessions (user_id);

-- API keys: only the SHA-256 of the key is stored; the plaintext exists once, at creation.
create table api_keys (
  id uuid primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  name text not null,
  key_hash text not null unique,
  prefix text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_account on api_keys (account_id, created_at);

create table brands (
  id integer generated always as identity primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  slug text not null,
  name text not null,
  domain text not null,
  vertical text not null,
  primary_region text not null default 'US',
  primary_language text not null default 'en',
  aliases text[] not null default '{}',
  site_id uuid not null unique,
  drain_secret text,
  next_scan_at timestamptz not null default now(),
  added_at timestamptz not null default now(),
  unique (account_id, slug)
);
create index brands_account on brands (account_id, added_at, id);

create table competitors (
  id integer generated always as identity primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null references brands (id) on delete cascade,
  name text not null,
  domain text not null,
  aliases text[] not null default '{}',
  pinned boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index competitors_brand_name on competitors (brand_id, lower(name));
create index competitors_account on competitors (account_id);

-- Monitored prompts: a uuid for the API, and the integer id that fan-out groups expose.
create table prompts (
  id uuid primary key,
  num integer generated always as identity unique,
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null references brands (id) on delete cascade,
  prompt text not null,
  topic text not null,
  intent text not null,
  source text not null,
  source_query text not null default '',
  created_at timestamptz not null default now(),
  unique (brand_id, prompt)
);
create index prompts_account on prompts (account_id);

-- Stored crawler hits per calendar month (UTC), shared by both ingestion endpoints.
create table monthly_usage (
  account_id bigint not null references accounts (id) on delete cascade,
  month date not null,
  events bigint not null default 0,
  primary key (account_id, month)
);
